import type { Context } from '../context.ts';
import { newToken } from './tokens.ts';
import type { DeliveryResult, OutboundDelivery } from './storage/outbound.ts';

/** What one POST came to: a 2xx, or why not (a status, a timeout, a refused connection). */
export type PostResult = { ok: true } | { ok: false; error: string };

/** POSTs a signed body to an endpoint; never throws (see events/post.ts). */
export type Post = (delivery: OutboundDelivery, secret: string, nowMs: number) => Promise<PostResult>;

export interface OutboundRunResult {
  delivered: number;
  retried: number;
  dead: number;
  /** claims a settle found taken over by another worker (this one was too slow) */
  lost: number;
  /** delivered or dead rows deleted, older than webhooksOutRetentionDays */
  pruned: number;
}

/** How long a failing event is retried, from when it was caused; after that it is `dead`. */
export const RETRY_FOR_MS = 24 * 60 * 60_000;
/** Waits after the 1st, 2nd, ... failed try; the last one repeats until RETRY_FOR_MS has passed. */
const BACKOFF_MS = [10_000, 30_000, 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000, 60 * 60_000, 2 * 60 * 60_000, 4 * 60 * 60_000];
/**
 * Deliveries claimed at once, all in flight together: with a 5 s timeout a claim is settled within
 * seconds, far inside STALE_MS, so a live worker's claim is never taken over.
 */
const CLAIM = 20;
/** a `delivering` row older than this was left by a worker that died: it is tried again */
const STALE_MS = 2 * 60_000;
/** tracking batches (up to a flush of opens and clicks each) turned into deliveries before each claim */
const EXPAND = 5;
/** rows deleted per statement, and statements per run, by retention: a backlog goes over several runs */
const PRUNE = 1000;
const PRUNE_ROUNDS = 20;

export function nextTry(delivery: Pick<OutboundDelivery, 'attempts' | 'created_at'>, now: number, error: string): DeliveryResult {
  const deadline = delivery.created_at + RETRY_FOR_MS;
  if (now >= deadline) return { status: 'dead', error };
  const wait = BACKOFF_MS[Math.min(delivery.attempts, BACKOFF_MS.length) - 1] ?? BACKOFF_MS[0];
  return { status: 'pending', nextAttemptAt: Math.min(now + wait, deadline), error };
}

/**
 * One run of outgoing webhook delivery: claims what is due, POSTs it, records each result under the
 * claim, until nothing is due (or `signal` stops it). At least once: a worker that dies after the
 * receiver's 2xx but before recording it leaves the row to be tried again, with the same id.
 */
export async function deliverOutbound(ctx: Pick<Context, 'store' | 'clock' | 'config' | 'log'>, post: Post, opts: { signal?: AbortSignal } = {}): Promise<OutboundRunResult> {
  const result: OutboundRunResult = { delivered: 0, retried: 0, dead: 0, lost: 0, pruned: 0 };
  const secrets = new Map(ctx.config.webhooksOut.map((h) => [h.url, h.secret]));
  while (!opts.signal?.aborted) {
    const expanded = await ctx.store.outbound.expandTracking(EXPAND, ctx.clock.now());
    const now = ctx.clock.now();
    const claimToken = newToken();
    const batch = await ctx.store.outbound.claimDue(now, now - STALE_MS, CLAIM, claimToken);
    if (batch.length === 0 && expanded === 0) break;
    await Promise.all(
      batch.map(async (d) => {
        const secret = secrets.get(d.endpoint);
        const outcome: PostResult = secret === undefined ? { ok: false, error: 'endpoint no longer in webhooksOut' } : await post(d, secret, ctx.clock.now());
        const at = ctx.clock.now();
        const settled: DeliveryResult = outcome.ok ? { status: 'delivered' } : secret === undefined ? { status: 'dead', error: outcome.error } : nextTry(d, at, outcome.error);
        if (!(await ctx.store.outbound.settle(d.id, claimToken, settled, at))) result.lost++;
        else if (settled.status === 'delivered') result.delivered++;
        else if (settled.status === 'dead') result.dead++;
        else result.retried++;
        if (!outcome.ok) ctx.log.warn({ event: d.event_id, endpoint: d.endpoint, attempt: d.attempts, error: outcome.error, next: settled.status }, 'webhook delivery failed');
      }),
    );
    if (batch.length < CLAIM && expanded === 0) break;
  }
  if (!opts.signal?.aborted) result.pruned = await pruneOutbound(ctx);
  return result;
}

/**
 * Retention: delivered and dead rows are deleted webhooksOutRetentionDays after they were settled
 * (0 keeps them), in bounded statements so a large backlog never holds the database for long.
 */
async function pruneOutbound(ctx: Pick<Context, 'store' | 'clock' | 'config'>): Promise<number> {
  const days = ctx.config.webhooksOutRetentionDays;
  if (days === 0) return 0;
  const before = ctx.clock.now() - days * 24 * 60 * 60_000;
  let pruned = 0;
  for (let i = 0; i < PRUNE_ROUNDS; i++) {
    const n = await ctx.store.outbound.prune(before, PRUNE);
    pruned += n;
    if (n < PRUNE) break;
  }
  return pruned;
}

/** When the next outgoing delivery is due by `ctx.clock` (a retry's time, a batch at once, a dead worker's claim), or undefined. */
export function nextOutboundAt(ctx: Pick<Context, 'store'>): Promise<number | undefined> {
  return ctx.store.outbound.nextDueAt(STALE_MS);
}
