import type { Context } from '../context.ts';
import { nextOutboundAt } from './outbound-delivery.ts';

/**
 * The earliest time a worker has something to do that it knows of: a scheduled campaign's start, the
 * next attempt of a deferred send of a campaign being sent, a drip step coming due (a first step, a
 * next step, a retry). Starts, retries and steps due at or before `since` (the start of the round just
 * run) are left out: that round saw them and left them (a start that failed or was a testMode dry run,
 * another worker's claim, a contact still pending double opt-in), so waking for them again would only
 * spin; the next round after the interval tries them again. An outgoing webhook's retry counts
 * whenever it falls: a round delivers every one that is due.
 */
export async function nextWake(ctx: Pick<Context, 'store' | 'config'>, since: number): Promise<number | undefined> {
  const { campaigns, sends, enrollments } = ctx.store;
  const outbound = ctx.config.webhooksOut.length > 0 ? nextOutboundAt(ctx) : undefined;
  const times = await Promise.all([campaigns.nextSendAt(since), sends.nextAttempt(since), enrollments.nextDue(since), outbound]);
  const known = times.filter((t): t is number => t !== undefined);
  return known.length > 0 ? Math.min(...known) : undefined;
}
