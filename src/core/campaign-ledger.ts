import type { Context } from '../context.ts';
import { minutes } from './clock.ts';
import { settleOutcome } from './deferral.ts';
import type { Delivered, DeliveryJob } from './delivery.ts';
import type { Segment } from './segments.ts';
import type { SendRecord } from './types.ts';
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
 *
 * The ledger keeps nothing per send: what a start decided is written on the send's own record (the
 * caller's row, which lives as long as its chunk), so a run's memory is bounded by its chunks, not
 * by how many it has sent (a map of attempts by send id held ~40 bytes per send for the whole run).
 */
/** a campaign's delivery job: the send is its row as claimed, which the ledger keeps up to date */
export interface CampaignJob extends DeliveryJob {
  send: SendRecord;
}

export interface CampaignLedger {
  /**
   * Returns the jobs granted. Each send started gets `status` `sending` and `attempts` as the start
   * wrote them; one whose contact left gets `status` `suppressed` (and is not returned).
   */
  start(starting: CampaignJob[], done: Delivered<CampaignJob>[]): Promise<CampaignJob[]>;
  record(done: Delivered<CampaignJob>[]): Promise<void>;
  /** the outcome of `send` (started by this ledger) as it is (or will be) recorded: a transient failure with attempts left is `deferred` */
  settled(outcome: SendOutcome, send: SendRecord): SendOutcome;
  /** true once a `start` found the campaign no longer `sending` (paused, cancelled elsewhere) */
  readonly lostHold: boolean;
}

export function campaignLedger(ctx: Pick<Context, 'store' | 'clock' | 'config'>, campaignId: number, segment: Segment | null = null): CampaignLedger {
  let lostHold = false;
  const settled = (o: SendOutcome, send: SendRecord, now = ctx.clock.now()) => settleOutcome(o, send.attempts, ctx.config, now);

  /** one group commit: `starting` marked `sending`, the outcomes in `done` with the counters they move */
  const write = (starting: CampaignJob[], done: Delivered<CampaignJob>[]) => {
    const now = ctx.clock.now();
    const outcomes = done.map((d) => settled(d.outcome, d.job.send, now));
    const counts: CounterDeltas = {};
    // a deferred send is counted when it ends: neither sent nor failed until then
    for (const o of outcomes) if (o.status !== 'deferred') counts[o.status] = (counts[o.status] ?? 0) + 1;
    return ctx.store.campaigns.writeSendGroup(campaignId, { start: starting.map((j) => j.send.id), outcomes, counts, segment }, now);
  };

  return {
    async start(starting, done) {
      const { started: marked, suppressed: left } = await write(starting, done);
      // none started: another run took them, or the campaign is no longer sending (then stop)
      if (marked.length === 0 && left.length === 0 && (await ctx.store.campaigns.statusOf(campaignId)) !== 'sending') lostHold = true;
      const attempts = new Map(marked.map((r) => [r.id, r.attempts]));
      const gone = new Set(left);
      return starting.filter(({ send }) => {
        if (gone.has(send.id)) send.status = 'suppressed';
        const attempt = attempts.get(send.id);
        if (attempt === undefined) return false;
        send.status = 'sending';
        send.attempts = attempt;
        return true;
      });
    },
    record: async (done) => void (await write([], done)),
    settled: (o, send) => settled(o, send),
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
