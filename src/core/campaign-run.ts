import type { Config } from '../config.ts';
import { listHeaders } from './list-headers.ts';
import { randomBytes } from 'node:crypto';
import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
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
 * BEFORE the mailer is called, so reruns and overlapping runs never send twice; each outcome and
 * its counter are written as they happen (grouped over up to 20 ms). Rows a crashed run left
 * `sending` past staleLockMinutes become failed/interrupted (at most once: the provider may have
 * taken them). Suppressed audience members get a `suppressed` row and do not use up the batch.
 */
export async function runCampaign(ctx: Context, campaignId: number, opts: RunOptions = {}): Promise<CampaignRunResult> {
  const campaign = await ctx.store.campaigns.getById(campaignId);
  if (!campaign) throw new NotifyError('NOT_FOUND', `Campaign ${campaignId} not found`, { campaignId });
  const result: CampaignRunResult = { campaignId, sent: 0, failed: 0, suppressed: 0, interrupted: 0, remaining: 0, done: campaign.status === 'sent' };
  // A campaign can be marked sent while a crashed run's rows are still `sending`: they are settled
  // (failed/interrupted) by the first run after staleLockMinutes, sent campaign or not.
  result.interrupted = await reclaimStale(ctx, campaignId);
  if (result.done) return result;
  const message = await ctx.dispatcher.prepare(`c${campaignId}`, specOf(campaign, ctx.config));
  if (campaign.status === 'draft') await ctx.store.campaigns.setStatus(campaignId, 'sending', ctx.clock.now());

  const { batchSize } = ctx.config;
  const chunk = chunkSize(ctx.config.throttleMs, opts.chunkSize);
  let budget = batchSize;
  let cursor = 0;
  let scanned = 0;
  const expected = opts.onProgress ? Math.min(batchSize, await ctx.store.campaigns.countUnsent(campaign)) : 0;
  const report = () => opts.onProgress?.({ campaignId, expected, budget, sent: result.sent, failed: result.failed, suppressed: result.suppressed });
  report();
  // Outcomes are written behind the sending, as they come; the next chunk's audience is read
  // while this one is sent. The claim itself is never deferred.
  const delivery = createDeliveryRun<DeliveryJob>(ctx, { record: (group) => record(ctx, campaignId, group) });
  const nextMembers = (size: number) => (budget > 0 && scanned < batchSize * 20 ? ctx.store.campaigns.unsent(campaign, cursor, size) : Promise.resolve([]));
  let pending = nextMembers(Math.min(chunk, budget));
  for (;;) {
    const members = await pending;
    delivery.check();
    if (members.length === 0) break;
    cursor = members[members.length - 1].id;
    scanned += members.length;
    const mine = await claim(ctx, campaign, members);
    const toSend = mine.filter((r) => r.status === 'sending');
    result.suppressed += mine.length - toSend.length;
    budget -= toSend.length;
    pending = nextMembers(Math.min(chunk, budget));
    const byId = new Map(members.map((m) => [m.id, m]));
    const outcomes = await delivery.send(toSend.map((row) => ({ message, send: row, contact: byId.get(row.contact_id!) })));
    for (const o of outcomes) result[o.status === 'sent' ? 'sent' : o.status === 'suppressed' ? 'suppressed' : 'failed']++;
    report();
  }
  await delivery.drain();
  result.remaining = await ctx.store.campaigns.countUnsent(campaign);
  if (result.remaining === 0) {
    await ctx.store.campaigns.setStatus(campaignId, 'sent', ctx.clock.now());
    result.done = true;
  }
  return result;
}

export function specOf(c: Campaign, config?: Pick<Config, 'listIdDomain' | 'feedbackId'>) {
  return {
    subject: c.subject,
    html: c.html,
    markdown: c.markdown,
    markdownFile: c.markdown_file,
    text: c.text,
    layout: c.layout,
    fromName: c.from_name,
    fromEmail: c.from_email,
    // the campaign's own headers win over the generated ones
    headers: config ? { ...listHeaders(config, { kind: 'campaign', id: c.id, list: c.list }), ...c.headers } : c.headers,
    data: { ...c.data, campaign: { id: c.id, name: c.name ?? '', subject: c.subject } },
  };
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

/** Creates this chunk's rows; only the ones this call inserted are ours to send. */
async function claim(ctx: Context, campaign: Campaign, members: RecipientContact[]): Promise<SendRecord[]> {
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
