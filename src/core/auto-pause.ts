import type { Context } from '../context.ts';
import { stopLocalRuns } from './campaign-control.ts';
import type { TransitionFields } from './storage/campaigns.ts';
import type { Campaign } from './types.ts';

/** Below this many sends a few bounces say nothing about the list. */
export const AUTO_PAUSE_MIN_SENDS = 200;
const AUTO_PAUSED = 'auto-paused: ';

/**
 * `autoPauseBounceRate`: a campaign whose bounces plus complaints exceed that share of its sends
 * (at least AUTO_PAUSE_MIN_SENDS of them) is paused, with the figures as its status_reason, before
 * a bad list hurts the sender's reputation further. Checked by the run before each chunk. Once the
 * campaign was resumed, only the sends and bounces counted since then are judged: those before were
 * seen by whoever resumed it, and judging them again would pause it before it sent anything. Returns
 * the reason when this call paused it.
 */
export async function autoPauseIfBouncing(ctx: Pick<Context, 'config' | 'store' | 'clock' | 'log' | 'runs'>, campaignId: number): Promise<string | undefined> {
  const limit = ctx.config.autoPauseBounceRate;
  if (!(limit > 0)) return undefined;
  const c = await ctx.store.counters.get(campaignId);
  // the base only lowers the sends judged: under the minimum in all, under it since the resume too
  if (c.sent < AUTO_PAUSE_MIN_SENDS) return undefined;
  const base = await ctx.store.campaigns.autoPauseBase(campaignId);
  const sent = c.sent - base.sent;
  const bad = c.bounced + c.complained - base.bad;
  if (sent < AUTO_PAUSE_MIN_SENDS || bad / sent <= limit) return undefined;
  const figures = base.sent > 0 ? `${bad} bounces and complaints in ${sent} sends since it was resumed` : `${c.bounced} bounces and ${c.complained} complaints in ${sent} sends`;
  const reason = `${AUTO_PAUSED}${figures} (${pct(bad / sent)}, above autoPauseBounceRate ${pct(limit)})`;
  const paused = await ctx.store.campaigns.transition(campaignId, ['sending'], 'paused', { status_reason: reason }, ctx.clock.now());
  if (!paused) return undefined;
  stopLocalRuns(ctx, campaignId);
  ctx.log.warn({ campaignId, sent: c.sent, bounced: c.bounced, complained: c.complained, sinceResume: base.sent > 0 ? { sent, bad } : undefined }, reason);
  return reason;
}

/** A campaign paused by autoPauseIfBouncing (its reason begins so), not by hand or for an empty audience. */
export function isAutoPaused(c: Pick<Campaign, 'status_reason'>): boolean {
  return c.status_reason?.startsWith(AUTO_PAUSED) ?? false;
}

/**
 * The fields that make an auto-paused campaign sent again (resumed, or scheduled anew) start a fresh
 * auto-pause window: its counters now.
 */
export async function autoPauseBaseNow(ctx: Pick<Context, 'store'>, campaignId: number): Promise<TransitionFields> {
  const c = await ctx.store.counters.get(campaignId);
  return { auto_pause_sent_base: c.sent, auto_pause_bad_base: c.bounced + c.complained };
}

function pct(r: number): string {
  return `${(r * 100).toFixed(1).replace(/\.0$/, '')}%`;
}
