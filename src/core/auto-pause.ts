import type { Context } from '../context.ts';
import { stopLocalRuns } from './campaign-control.ts';

/** Below this many sends a few bounces say nothing about the list. */
export const AUTO_PAUSE_MIN_SENDS = 200;

/**
 * `autoPauseBounceRate`: a campaign whose bounces plus complaints exceed that share of its sends
 * (at least AUTO_PAUSE_MIN_SENDS of them) is paused, with the figures as its status_reason, before
 * a bad list hurts the sender's reputation further. Checked by the run before each chunk. Returns
 * the reason when this call paused it.
 */
export async function autoPauseIfBouncing(ctx: Pick<Context, 'config' | 'store' | 'clock' | 'log' | 'runs'>, campaignId: number): Promise<string | undefined> {
  const limit = ctx.config.autoPauseBounceRate;
  if (!(limit > 0)) return undefined;
  const c = await ctx.store.counters.get(campaignId);
  const bad = c.bounced + c.complained;
  if (c.sent < AUTO_PAUSE_MIN_SENDS || bad / c.sent <= limit) return undefined;
  const reason = `auto-paused: ${c.bounced} bounces and ${c.complained} complaints in ${c.sent} sends (${pct(bad / c.sent)}, above autoPauseBounceRate ${pct(limit)})`;
  const paused = await ctx.store.campaigns.transition(campaignId, ['sending'], 'paused', { status_reason: reason }, ctx.clock.now());
  if (!paused) return undefined;
  stopLocalRuns(ctx, campaignId);
  ctx.log.warn({ campaignId, sent: c.sent, bounced: c.bounced, complained: c.complained }, reason);
  return reason;
}

function pct(r: number): string {
  return `${(r * 100).toFixed(1).replace(/\.0$/, '')}%`;
}
