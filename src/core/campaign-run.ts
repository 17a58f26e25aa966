
import { randomBytes } from 'node:crypto';
import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { autoPauseIfBouncing } from './auto-pause.ts';
import { watchRun } from './campaign-control.ts';
import { dryRun, specOf, startRun } from './campaign-start.ts';
import { minutes } from './clock.ts';
import { chunkSize, createDeliveryRun, type Delivered, type DeliveryJob } from './delivery.ts';
import { addDelta, type CounterDeltas } from './storage/counters.ts';
import { type Campaign, type CampaignRunResult, isSuppressedStatus, type RecipientContact, type SendRecord } from './types.ts';

export interface RunProgress {
  campaignId: number;
  /** what this run expects to handle: min(batchSize, audience members without a send row) */
  expected: number;
  /** emails this run may still send (batchSize minus those sent or failed so far) */
  budget: number;
  sent: number;
  failed: number;
  suppressed: number;
}

export interface RunOptions {
  /** called after every chunk (and once at the start) */
  onProgress?(p: RunProgress): void;
  /** send rows claimed per round trip (default 100) */
  chunkSize?: number;
}

/**
 * One run of notify:send-campaign. Rows are claimed (one INSERT per chunk, unique campaign+contact)
 * BEFORE the mailer is called, so reruns, overlapping runs and several workers after a resume never
 * send twice; each outcome and its counter are written as they happen (grouped over up to 20 ms).
 * Rows a crashed run left `sending` past staleLockMinutes become failed/interrupted (at most once:
 * the provider may have taken them). Suppressed audience members get a `suppressed` row and do not
 * use up the batch.
 *
 * Only a `sending` campaign sends; a draft or a due scheduled one starts here. A paused, cancelled
 * or not-yet-due campaign sends nothing and the result's `note` says why. The run stops between two
 * sends once the campaign leaves `sending` (campaign-control.ts) and gives back what it had claimed.
 */
export async function runCampaign(ctx: Context, campaignId: number, opts: RunOptions = {}): Promise<CampaignRunResult> {
  const found = await ctx.store.campaigns.getById(campaignId);
  if (!found) throw new NotifyError('NOT_FOUND', `Campaign ${campaignId} not found`, { campaignId });
  const result: CampaignRunResult = { campaignId, sent: 0, failed: 0, suppressed: 0, interrupted: 0, remaining: 0, done: found.status === 'sent', status: found.status };
  // A campaign can be marked sent while a crashed run's rows are still `sending`: they are settled
  // (failed/interrupted) by the first run after staleLockMinutes, sent campaign or not.
  result.interrupted = await reclaimStale(ctx, campaignId);
  if (result.done) return result;
  if (ctx.config.testMode) return dryRun(ctx, found, result);
  const campaign = await startRun(ctx, found, result);
  if (!campaign) return result;
  const message = await ctx.dispatcher.prepare(`c${campaignId}`, specOf(campaign, ctx.config));

  const { batchSize } = ctx.config;
  const chunk = chunkSize(ctx.config.throttleMs, opts.chunkSize);
  let budget = batchSize;
  let cursor = 0;
  let scanned = 0;
  const expected = opts.onProgress ? Math.min(batchSize, await ctx.store.campaigns.countUnsent(campaign)) : 0;
  const report = () => opts.onProgress?.({ campaignId, expected, budget, sent: result.sent, failed: result.failed, suppressed: result.suppressed });
  report();
  const control = watchRun(ctx, campaignId);
  try {
    // Outcomes are written behind the sending, as they come; the next chunk's audience is read
    // while this one is sent. The claim itself is never deferred.
    const delivery = createDeliveryRun<DeliveryJob>(ctx, { record: (group) => record(ctx, campaignId, group), stop: () => control.stopped });
    const nextMembers = (size: number) => (budget > 0 && scanned < batchSize * 20 ? ctx.store.campaigns.unsent(campaign, cursor, size) : Promise.resolve([]));
    let pending = nextMembers(Math.min(chunk, budget));
    for (;;) {
      const members = await pending;
      delivery.check();
      if (members.length === 0 || (await control.refresh()) || (await autoPauseIfBouncing(ctx, campaignId))) break;
      cursor = members[members.length - 1].id;
      scanned += members.length;
      const mine = await claim(ctx, campaign, members);
      if (!mine) {
        await control.refresh();
        break;
      }
      const toSend = mine.filter((r) => r.status === 'sending');
      result.suppressed += mine.length - toSend.length;
      budget -= toSend.length;
      pending = nextMembers(Math.min(chunk, budget));
      const byId = new Map(members.map((m) => [m.id, m]));
      const outcomes = await delivery.send(toSend.map((row) => ({ message, send: row, contact: byId.get(row.contact_id!) })));
      const unstarted = toSend.filter((_, i) => outcomes[i] === undefined).map((r) => r.id);
      if (unstarted.length > 0) await release(ctx, campaignId, unstarted);
      for (const o of outcomes) if (o) result[o.status === 'sent' ? 'sent' : o.status === 'suppressed' ? 'suppressed' : 'failed']++;
      report();
      if (control.stopped) break;
    }
    await delivery.drain();
  } finally {
    control.close();
  }
  result.remaining = await ctx.store.campaigns.countUnsent(campaign);
  if (control.stopped) return stoppedDuringRun(ctx, campaignId, result);
  if (result.remaining === 0 && (await ctx.store.campaigns.transition(campaignId, ['sending'], 'sent', {}, ctx.clock.now()))) {
    result.done = true;
    result.status = 'sent';
  }
  return result;
}

async function stoppedDuringRun(ctx: Context, id: number, result: CampaignRunResult): Promise<CampaignRunResult> {
  const c = await ctx.store.campaigns.getById(id);
  result.status = c?.status ?? result.status;
  result.note = `campaign ${id} was ${result.status} during this run${c?.status_reason ? ` (${c.status_reason})` : ''}; it stopped after the sends in flight`;
  return result;
}

async function reclaimStale(ctx: Context, campaignId: number): Promise<number> {
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

/** Rows claimed but never handed to the mailer (the run stopped): deleted, their count taken back. */
async function release(ctx: Context, campaignId: number, sendIds: number[]): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    const released = await tx.campaigns.releaseClaims(campaignId, sendIds);
    if (released > 0) await tx.counters.add(new Map([[campaignId, { total: -released }]]));
  });
}

/** Creates this chunk's rows; only the ones this call inserted are ours to send. None once the campaign is paused or cancelled. */
async function claim(ctx: Context, campaign: Campaign, members: RecipientContact[]): Promise<SendRecord[] | undefined> {
  const tokens = newTokens(members.length);
  const rows = members.map((m, i) => ({
    token: tokens[i],
    campaign_id: campaign.id,
    contact_id: m.id,
    to_email: m.email,
    subject: campaign.subject,
    status: isSuppressedStatus(m.status) ? ('suppressed' as const) : ('sending' as const),
  }));
  // The rows and the counters that count them commit together: a crash leaves both or neither.
  // The counter upsert comes last, so its row lock is held only for the commit.
  return ctx.store.transaction(async (tx) => {
    if (!(await tx.campaigns.holdSending(campaign.id))) return undefined;
    const mine = await tx.sends.claim(rows, ctx.clock.now());
    if (mine.length > 0) {
      const suppressed = mine.filter((r) => r.status === 'suppressed').length;
      await tx.counters.add(new Map([[campaign.id, { total: mine.length, suppressed }]]));
    }
    return mine;
  });
}

async function record(ctx: Context, campaignId: number, group: Delivered<DeliveryJob>[]): Promise<void> {
  const outcomes = group.map((d) => d.outcome);
  const deltas = new Map<number, CounterDeltas>();
  for (const o of outcomes) addDelta(deltas, campaignId, { [o.status]: 1 });
  // outcomes and their counters in one transaction, as the claim: stats never drift after a crash
  await ctx.store.transaction(async (tx) => {
    await tx.sends.finish(outcomes, ctx.clock.now());
    await tx.counters.add(deltas);
  });
}

/** n send tokens from one random read (the same 128-bit base64url tokens as newToken(), without n syscalls). */
function newTokens(n: number): string[] {
  const bytes = randomBytes(16 * n);
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = bytes.toString('base64url', 16 * i, 16 * i + 16);
  return out;
}
