import type { Context } from '../context.ts';
import { minutes } from './clock.ts';
import { settleOutcome } from './deferral.ts';
import type { Delivered, DeliveryJob } from './delivery.ts';
import type { Segment } from './segments.ts';
import type { CounterDeltas } from './storage/counters.ts';
import type { SendOutcome } from './storage/sends.ts';

/**
 * What a campaign run writes about its sends, each write one transaction with the counters it
 * moves (stats never drift after a crash):
 * - `start`: the sends a group of pool slots is about to hand to the mailer become `sending`
 *   (compare-and-set from `queued`; with the campaign row held, so a pause either comes first and
 *   nothing starts, or waits for them), together with the outcomes that came in meanwhile. A crash
 *   leaves in doubt only the `sending` rows: at most one per slot. A send whose contact left since
 *   the claim (suppressed, off the campaign's list, or no longer matching its segment) is
 *   `suppressed` there instead (counted so) and not handed over.
 * - `record`: outcomes alone (the last of each slot), grouped over a few milliseconds.
 * A transient failure becomes `deferred` until its last allowed attempt (deferral.ts).
 */
export interface CampaignLedger {
  start(starting: DeliveryJob[], done: Delivered<DeliveryJob>[]): Promise<DeliveryJob[]>;
  record(done: Delivered<DeliveryJob>[]): Promise<void>;
  /** the outcome as it is (or will be) recorded: a transient failure with attempts left is `deferred` */
  settled(outcome: SendOutcome): SendOutcome;
  /** true when a `start` found the send's contact gone from the audience and made the row `suppressed` */
  suppressedAtStart(sendId: number): boolean;
  /** true once a `start` found the campaign no longer `sending` (paused, cancelled elsewhere) */
  readonly lostHold: boolean;
}

export function campaignLedger(ctx: Pick<Context, 'store' | 'clock' | 'config'>, campaignId: number, segment: Segment | null = null): CampaignLedger {
  /** attempt number of each send this run started, by send id */
  const attempts = new Map<number, number>();
  const suppressed = new Set<number>();
  let lostHold = false;
  const settled = (o: SendOutcome, now = ctx.clock.now()) => settleOutcome(o, attempts.get(o.id) ?? 1, ctx.config, now);

  /** one group commit: `starting` marked `sending`, the outcomes in `done` with the counters they move */
  const write = (starting: DeliveryJob[], done: Delivered<DeliveryJob>[]) => {
    const now = ctx.clock.now();
    const outcomes = done.map((d) => settled(d.outcome, now));
    const counts: CounterDeltas = {};
    // a deferred send is counted when it ends: neither sent nor failed until then
    for (const o of outcomes) if (o.status !== 'deferred') counts[o.status] = (counts[o.status] ?? 0) + 1;
    return ctx.store.campaigns.writeSendGroup(campaignId, { start: starting.map((j) => j.send.id), outcomes, counts, segment }, now);
  };

  return {
    async start(starting, done) {
      const { started: marked, suppressed: left } = await write(starting, done);
      for (const id of left) suppressed.add(id);
      // none started: another run took them, or the campaign is no longer sending (then stop)
      if (marked.length === 0 && left.length === 0 && (await ctx.store.campaigns.statusOf(campaignId)) !== 'sending') lostHold = true;
      for (const r of marked) attempts.set(r.id, r.attempts);
      const ids = new Set(marked.map((r) => r.id));
      return starting.filter((j) => ids.has(j.send.id));
    },
    record: async (done) => void (await write([], done)),
    settled: (o) => settled(o),
    suppressedAtStart: (id) => suppressed.has(id),
    get lostHold() {
      return lostHold;
    },
  };
}

/**
 * Rows a crashed run left `sending` past staleLockMinutes become failed/interrupted: the mail
 * server may have taken them, so they are never resent (at most once). Returns how many.
 */
export async function reclaimStale(ctx: Pick<Context, 'store' | 'clock' | 'config' | 'log'>, campaignId: number): Promise<number> {
  const now = ctx.clock.now();
  const stale = await ctx.store.transaction(async (tx) => {
    const rows = await tx.sends.failStale(now - minutes(ctx.config.staleLockMinutes), now, campaignId);
    if (rows.length > 0) await tx.counters.add(new Map([[campaignId, { failed: rows.length }]]));
    return rows;
  });
  if (stale.length > 0) {
    ctx.log.warn({ campaignId, sends: stale.map((s) => s.id) }, `${stale.length} sends left 'sending' by an interrupted run marked failed (not resent)`);
  }
  return stale.length;
}

/** Rows claimed but never handed to the mailer (the run stopped): given back, their count taken back. */
export async function release(ctx: Pick<Context, 'store'>, campaignId: number, sendIds: number[]): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    const released = await tx.campaigns.releaseClaims(campaignId, sendIds);
    if (released > 0) await tx.counters.add(new Map([[campaignId, { total: -released }]]));
  });
}
