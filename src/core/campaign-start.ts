import type { Config } from '../config.ts';
import type { Context } from '../context.ts';
import { isNotifyError, NotifyError } from '../errors.ts';
import { autoPauseIfBouncing } from './auto-pause.ts';
import { allows } from './campaign-status.ts';
import { listHeaders } from './list-headers.ts';
import { type Campaign, type CampaignRunResult, isSuppressedStatus } from './types.ts';

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
    trackOpens: c.track_opens,
    trackClicks: c.track_clicks,
  };
}

/**
 * Decides whether this run may send: the campaign as `sending`, or undefined with the reason in
 * `result.note`. A draft or a due scheduled campaign starts here (compare-and-set, so of several
 * workers one starts it and the others join as runs of a `sending` campaign).
 */
export async function startRun(ctx: Context, campaign: Campaign, result: CampaignRunResult): Promise<Campaign | undefined> {
  const { id, status } = campaign;
  if (status === 'sending') {
    if (await autoPauseIfBouncing(ctx, id)) return stoppedBefore(ctx, id, result);
    return (await senderMissing(ctx, campaign, result)) ? undefined : campaign;
  }
  if (status === 'cancelled') return note(result, `campaign ${id} is cancelled; nothing is sent`);
  if (status === 'paused') return note(result, `campaign ${id} is paused${campaign.status_reason ? ` (${campaign.status_reason})` : ''}; resume it to continue`);
  if (status === 'scheduled' && campaign.send_at && campaign.send_at.getTime() > ctx.clock.now()) {
    return note(result, `campaign ${id} is scheduled for ${campaign.send_at.toISOString()}; nothing is sent before then`);
  }
  if (!allows('start', status)) return note(result, `campaign ${id} is ${status}; nothing is sent`);
  if ((await ctx.store.counters.get(id)).total === 0 && (await ctx.store.campaigns.countReachable(campaign)) === 0) {
    const why = `its audience is empty (${campaign.list ? `no subscribed contact in list ${JSON.stringify(campaign.list)}` : 'no subscribed contact'}${campaign.segment ? ' matching its segment' : ''})`;
    // Nobody asked for a scheduled start to fail: it is paused with the reason, for the admin page.
    if (status === 'scheduled' && (await ctx.store.campaigns.transition(id, ['scheduled'], 'paused', { status_reason: `not started: ${why}` }, ctx.clock.now()))) {
      ctx.log.warn({ campaignId: id }, `scheduled campaign ${id} not started: ${why}; paused`);
      result.status = 'paused';
      return note(result, `campaign ${id} not started: ${why}; it is paused`);
    }
    throw new NotifyError('EMPTY_AUDIENCE', `Campaign ${id} not started: ${why}`, { campaignId: id });
  }
  if (await senderMissing(ctx, campaign, result)) return undefined;
  const started = await ctx.store.campaigns.transition(id, [status], 'sending', { status_reason: null }, ctx.clock.now());
  if (started) {
    result.status = 'sending';
    return started;
  }
  // another run started it (or changed it) between the read and the write: decide again
  const now = await ctx.store.campaigns.getById(id);
  return now?.status === 'sending' ? startRun(ctx, now, result) : stoppedBefore(ctx, id, result);
}

/**
 * No from address (neither the campaign's nor the fromEmail option): found here, before any send, by
 * preparing the run's message (cached, so the run reuses it). A draft stays a draft and the caller
 * gets MISSING_SENDER; a due scheduled or a sending campaign is paused with the reason, so no worker
 * retries it every round and campaigns:list and the admin page say why. Resume after setting one.
 */
async function senderMissing(ctx: Context, campaign: Campaign, result: CampaignRunResult): Promise<boolean> {
  try {
    await ctx.dispatcher.prepare(`c${campaign.id}`, specOf(campaign, ctx.config));
    return false;
  } catch (err) {
    if (!isNotifyError(err, 'MISSING_SENDER') || campaign.status === 'draft') throw err;
    const { id, status } = campaign;
    const reason = `${status === 'sending' ? 'stopped' : 'not started'}: no from address (${err.message.replace(/^No from address: /, '')})`;
    const paused = await ctx.store.campaigns.transition(id, [status], 'paused', { status_reason: reason }, ctx.clock.now());
    if (!paused) throw err;
    ctx.log.warn({ campaignId: id }, `campaign ${id} ${reason}; paused`);
    result.status = 'paused';
    note(result, `campaign ${id} ${reason}; it is paused: resume it once a from address is set`);
    return true;
  }
}

function note(result: CampaignRunResult, text: string): undefined {
  result.note = text;
  return undefined;
}

async function stoppedBefore(ctx: Context, id: number, result: CampaignRunResult): Promise<undefined> {
  const c = await ctx.store.campaigns.getById(id);
  result.status = c?.status ?? result.status;
  return note(result, `campaign ${id} is ${result.status}${c?.status_reason ? ` (${c.status_reason})` : ''}; nothing is sent`);
}

/**
 * testMode: renders and logs (through the log mailer) what this run would send, claims nothing,
 * and leaves the campaign's status, rows and counters as they were.
 */
export async function dryRun(ctx: Context, campaign: Campaign, result: CampaignRunResult): Promise<CampaignRunResult> {
  const message = await ctx.dispatcher.prepare(`c${campaign.id}`, specOf(campaign, ctx.config));
  const members = await ctx.store.campaigns.unsent(campaign, 0, ctx.config.batchSize);
  let would = 0;
  for (const contact of members) {
    if (isSuppressedStatus(contact.status)) continue;
    const out = await ctx.dispatcher.render(message, { send: { id: 0, token: 'dry-run-not-a-token00' }, contact });
    await ctx.mailer.send(out);
    would++;
  }
  result.dryRun = would;
  result.remaining = await ctx.store.campaigns.countUnsent(campaign);
  result.note = `testMode: dry run of campaign ${campaign.id}, ${would} message(s) logged; nothing sent, status, rows and stats unchanged`;
  return result;
}

