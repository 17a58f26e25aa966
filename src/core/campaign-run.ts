
import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { autoPauseIfBouncing } from './auto-pause.ts';
import { watchRun } from './campaign-control.ts';
import { cancelWaitingSends } from './campaign-lifecycle.ts';
import { dryRun, specOf, startRun } from './campaign-start.ts';
import type { PreparedMessage } from './dispatch.ts';
import { minutes } from './clock.ts';
import { claim } from './campaign-claim.ts';
import { type CampaignJob, campaignLedger, reclaimStale, release } from './campaign-ledger.ts';
import { chunkSize, createDeliveryRun } from './delivery.ts';
import type { Campaign, CampaignRunResult, RecipientContact, SendRecord } from './types.ts';

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
 * One run of notify:send-campaign. Rows are claimed `queued` (one INSERT per chunk, unique
 * campaign+contact) BEFORE the mailer is called, so reruns, overlapping runs and several workers
 * after a resume never send twice. Each becomes `sending` (committed, in groups) just before a pool
 * slot hands it to the mailer, and its outcome is written as it comes: a crash leaves in doubt only
 * the sends in flight. Rows a crashed run left `sending` past staleLockMinutes become
 * failed/interrupted (at most once: the provider may have taken them); rows it left `queued` were
 * never handed over and are sent by a later run. A transient failure is `deferred` and retried by
 * the runs after its next_attempt_at, until maxRetries. Suppressed audience members get a
 * `suppressed` row and do not use up the batch. The campaign is `sent` once every member has a
 * final row (none deferred or queued).
 *
 * Only a `sending` campaign sends; a draft or a due scheduled one starts here. A paused, cancelled
 * or not-yet-due campaign sends nothing and the result's `note` says why. The run stops between two
 * sends once the campaign leaves `sending` (campaign-control.ts) and gives back what it had claimed.
 */
export async function runCampaign(ctx: Context, campaignId: number, opts: RunOptions = {}): Promise<CampaignRunResult> {
  const found = await ctx.store.campaigns.getById(campaignId);
  if (!found) throw new NotifyError('NOT_FOUND', `Campaign ${campaignId} not found`, { campaignId });
  const result: CampaignRunResult = { campaignId, sent: 0, failed: 0, suppressed: 0, interrupted: 0, remaining: 0, deferred: 0, waiting: 0, done: found.status === 'sent', status: found.status };
  // A campaign can be marked sent while a crashed run's rows are still `sending`: they are settled
  // (failed/interrupted) by the first run after staleLockMinutes, sent campaign or not.
  result.interrupted = await reclaimStale(ctx, campaignId);
  if (result.done) return result;
  if (ctx.config.testMode) return dryRun(ctx, found, result);
  const campaign = await startRun(ctx, found, result);
  if (!campaign) return withWaiting(ctx, result);
  const message = await ctx.dispatcher.prepare(`c${campaignId}`, specOf(campaign, ctx.config));
  const stopped = await sendRun(ctx, campaign, message, result, opts);
  result.remaining = await ctx.store.campaigns.countUnsent(campaign);
  await withWaiting(ctx, result);
  if (stopped) return stoppedDuringRun(ctx, campaignId, result);
  if (result.remaining === 0 && result.waiting === 0 && (await ctx.store.campaigns.transition(campaignId, ['sending'], 'sent', {}, ctx.clock.now()))) {
    result.done = true;
    result.status = 'sent';
  }
  return result;
}

/** sends what the run may (deferred and stale sends first, then the audience chunk by chunk); true when the campaign left `sending` or the run lost its hold meanwhile */
async function sendRun(ctx: Context, campaign: Campaign, message: PreparedMessage, result: CampaignRunResult, opts: RunOptions): Promise<boolean> {
  const campaignId = campaign.id;
  const chunk = chunkSize(ctx.config.throttleMs, opts.chunkSize);
  let budget = ctx.config.batchSize;
  const expected = opts.onProgress ? Math.min(ctx.config.batchSize, await ctx.store.campaigns.countUnsent(campaign)) : 0;
  const report = () => opts.onProgress?.({ campaignId, expected, budget, sent: result.sent, failed: result.failed, suppressed: result.suppressed });
  report();
  const control = watchRun(ctx, campaignId);
  const ledger = campaignLedger(ctx, campaignId, campaign.segment);
  try {
    // Each send is marked `sending` as a pool slot takes it and its outcome written as it comes (campaign-ledger.ts)
    const delivery = createDeliveryRun<CampaignJob>(ctx, { record: ledger.record, start: ledger.start, stop: () => control.stopped || ledger.lostHold });
    const send = async (rows: SendRecord[], contacts: Map<number, RecipientContact>) => {
      budget -= rows.length;
      const outcomes = await delivery.send(rows.map((row) => ({ message, send: row, contact: contacts.get(row.contact_id!) })));
      // a send whose contact left since the claim is final (suppressed: the ledger's start says so on the row) and, as at the claim, not spent from the batch
      const left = rows.filter((r) => r.status === 'suppressed').length;
      result.suppressed += left;
      budget += left;
      const unstarted = rows.filter((r, i) => outcomes[i] === undefined && r.status !== 'suppressed').map((r) => r.id);
      if (unstarted.length > 0) await release(ctx, campaignId, unstarted);
      for (const [i, o] of outcomes.entries()) if (o) result[ledger.settled(o, rows[i]).status]++;
      report();
    };
    await sendWaiting(ctx, campaignId, chunk, () => budget, () => control.stopped || ledger.lostHold, async (rows, contacts) => {
      await send(rows, contacts);
      delivery.check();
    });
    const nextChunk = chunkReader(ctx, campaign, control, ledger, () => budget);
    // Unpaced, the next chunk is read and claimed (its rows `queued`: nothing in doubt) while this
    // one is sent, so the pool's slots do not wait for the claim's round trips and commit between
    // chunks. A paced or throttled run claims it after: what it holds queued stays one chunk, which
    // staleLockMinutes must outlast (README).
    const ahead = ctx.config.throttleMs === 0 && !ctx.pacer;
    let pending = nextChunk(Math.min(chunk, budget));
    for (;;) {
      const next = await pending;
      delivery.check();
      if (!next) break;
      const toSend = next.mine.filter((r) => r.status === 'queued');
      result.suppressed += next.mine.length - toSend.length;
      const size = Math.min(chunk, budget - toSend.length);
      if (ahead) {
        pending = nextChunk(size);
        // a failed claim ahead is thrown when awaited, or not at all when the send throws first
        pending.catch(() => {});
      }
      await send(toSend, new Map(next.members.map((m) => [m.id, m])));
      if (control.stopped || ledger.lostHold) {
        if (ahead) await giveBack(ctx, campaignId, await pending, result);
        break;
      }
      if (!ahead) pending = nextChunk(size);
    }
    await delivery.drain();
  } finally {
    control.close();
  }
  return control.stopped || ledger.lostHold;
}

/** first the sends waiting for another try: deferred ones now due, and those a dead run claimed */
async function sendWaiting(ctx: Context, campaignId: number, chunk: number, budget: () => number, stopped: () => boolean, send: (rows: SendRecord[], contacts: Map<number, RecipientContact>) => Promise<void>): Promise<void> {
  while (budget() > 0 && !stopped()) {
    const now = ctx.clock.now();
    const rows = await ctx.store.sends.takeWaiting(campaignId, now, now - minutes(ctx.config.staleLockMinutes), Math.min(chunk, budget()));
    if (rows.length === 0) break;
    await send(rows, await ctx.store.contacts.recipients(rows.flatMap((r) => (r.contact_id === null ? [] : [r.contact_id]))));
  }
}

/** the next chunk of the audience read and claimed; undefined once there is none or the run must stop */
function chunkReader(ctx: Context, campaign: Campaign, control: ReturnType<typeof watchRun>, ledger: ReturnType<typeof campaignLedger>, budget: () => number): (size: number) => Promise<{ members: RecipientContact[]; mine: SendRecord[] } | undefined> {
  const { batchSize } = ctx.config;
  const campaignId = campaign.id;
  let cursor = 0;
  let scanned = 0;
  const nextMembers = (size: number) => (budget() > 0 && scanned < batchSize * 20 ? ctx.store.campaigns.unsent(campaign, cursor, size) : Promise.resolve([]));
  return async (size: number) => {
    const members = await nextMembers(size);
    if (members.length === 0 || control.stopped || ledger.lostHold || (await control.refresh()) || (await autoPauseIfBouncing(ctx, campaignId))) return undefined;
    cursor = members[members.length - 1].id;
    scanned += members.length;
    const mine = await claim(ctx, campaign, members);
    if (!mine) await control.refresh();
    return mine && { members, mine };
  };
}

/** the campaign's sends not final yet (deferred, or claimed by a run still going) and their next try */
async function withWaiting(ctx: Context, result: CampaignRunResult): Promise<CampaignRunResult> {
  const w = await ctx.store.sends.waiting(result.campaignId);
  result.waiting = w.count;
  if (w.nextAttemptAt !== undefined) result.nextAttemptAt = new Date(w.nextAttemptAt);
  return result;
}

async function stoppedDuringRun(ctx: Context, id: number, result: CampaignRunResult): Promise<CampaignRunResult> {
  const c = await ctx.store.campaigns.getById(id);
  result.status = c?.status ?? result.status;
  // what this run gave back as it stopped (a retry waits as deferred) ends with the campaign
  if (result.status === 'cancelled') await cancelWaitingSends(ctx, id);
  result.note = `campaign ${id} was ${result.status} during this run${c?.status_reason ? ` (${c.status_reason})` : ''}; it stopped after the sends in flight`;
  return result;
}

/** A chunk claimed ahead by a run that stopped: its queued rows given back; its suppressed rows stay (final, counted). */
async function giveBack(ctx: Context, campaignId: number, ahead: { mine: SendRecord[] } | undefined, result: CampaignRunResult): Promise<void> {
  if (!ahead) return;
  const queued = ahead.mine.filter((r) => r.status === 'queued').map((r) => r.id);
  result.suppressed += ahead.mine.length - queued.length;
  if (queued.length > 0) await release(ctx, campaignId, queued);
}
