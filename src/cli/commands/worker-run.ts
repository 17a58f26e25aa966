import type { Command } from 'commander';
import type { BounceMailbox } from '../../bounces/index.ts';
import { runCampaign } from '../../core/campaign-run.ts';
import { runDrips } from '../../core/drip-run.ts';
import { nextWake } from '../../core/next-wake.ts';
import { NotifyError } from '../../errors.ts';
import type { Notify } from '../../notify.ts';
import { withNotify } from '../open.ts';
import { boundSenderHeap } from '../sender-heap.ts';
import { summary } from './send-campaign-run.ts';
import { dripSummary } from './process-drips-run.ts';

export interface Options {
  interval: string;
}

/**
 * `notify worker`: notify:process-drips and the next batch of every campaign being sent, again
 * and again, every --interval seconds (immediately again while a run was full, sooner when a
 * scheduled start, a retry or a drip step comes due before then). Any number of
 * workers may run against one PostgreSQL database. SIGTERM or SIGINT: the chunk of drips or the
 * campaign batch in hand is delivered and recorded, nothing more is claimed, and the process exits 0.
 * A failed round (database away) is logged and retried.
 */
export async function runWorker(opts: Options, cmd: Command): Promise<void> {
  boundSenderHeap();
  const interval = Number(opts.interval);
  if (!/^\d+(\.\d+)?$/.test(opts.interval) || interval <= 0 || interval > 86_400) {
    throw new NotifyError('INVALID_INPUT', `--interval must be a number of seconds from 0.001 to 86400 (got ${JSON.stringify(opts.interval)})`);
  }
  const stop = new AbortController();
  const onSignal = (signal: string) => {
    if (stop.signal.aborted) return;
    console.log(`notify worker: ${signal} received, finishing the batch in hand`);
    stop.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await withNotify(cmd, async (notify) => {
      console.log(`notify worker: started (every ${interval} s)`);
      while (!stop.signal.aborted) {
        const started = notify.context.clock.now();
        const more = await round(notify, stop.signal).catch((err) => {
          console.error(`notify worker: round failed: ${err instanceof NotifyError ? `${err.message} [${err.code}]` : (err as Error).message}`);
          return false;
        });
        if (!more) await pause(await untilNext(notify, interval * 1000, started), stop.signal);
      }
    }, { logAudience: 'service' });
    console.log('notify worker: stopped');
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * One round; true when a run was full (more is due right away). Scheduled campaigns whose time has
 * come start here (by the instance's clock); a campaign that fails (its template, an empty
 * audience) is reported and the others still run.
 */
export async function round(notify: Notify, signal: AbortSignal = new AbortController().signal): Promise<boolean> {
  const ctx = notify.context;
  let more = false;
  const drips = await runDrips(ctx, { signal });
  if (drips.claimed + drips.reclaimed > 0) console.log(dripSummary(drips));
  if (drips.claimed >= ctx.config.batchSize) more = true;
  if (signal.aborted) return false;
  const due = await ctx.store.campaigns.dueScheduled(ctx.clock.now());
  const sending = await ctx.store.campaigns.idsWithStatus('sending');
  for (const id of [...new Set([...due, ...sending])]) {
    if (signal.aborted) break;
    if (due.includes(id)) console.log(`campaign ${id}: scheduled time reached, starting`);
    const r = await runCampaign(ctx, id).catch((err) => {
      console.error(`notify worker: campaign ${id}: ${err instanceof NotifyError ? `${err.message} [${err.code}]` : (err as Error).message}`);
      return undefined;
    });
    if (!r) continue;
    if (r.sent + r.failed + r.suppressed + r.deferred + r.interrupted > 0 || r.done) console.log(summary(r));
    else if (r.note) console.log(r.note);
    if (!r.done && r.sent + r.failed + r.suppressed + r.deferred > 0 && r.status === 'sending') more = true;
  }
  if (notify.bounces && !signal.aborted) await pollBounces(notify.bounces);
  if (ctx.config.webhooksOut.length > 0 && !signal.aborted) {
    const w = await notify.events.deliver({ signal });
    if (w.delivered + w.retried + w.dead + w.lost > 0) console.log(`webhooks: ${w.delivered} delivered, ${w.retried} to retry, ${w.dead} dead${w.lost ? `, ${w.lost} taken over by another worker` : ''}`);
    if (w.pruned > 0) console.log(`webhooks: ${w.pruned} delivered or dead rows older than ${ctx.config.webhooksOutRetentionDays} days deleted`);
  }
  return more;
}

/** A mailbox that cannot be read (gone, wrong password) is reported each round; sending goes on. */
async function pollBounces(mailbox: BounceMailbox): Promise<void> {
  try {
    const r = await mailbox.poll();
    if (r.processed + r.skipped + r.failed > 0) {
      console.log(`bounce mailbox: ${r.processed} processed, ${r.skipped} left for a person, ${r.failed} to retry`);
    }
  } catch (err) {
    console.error(`notify worker: bounce mailbox poll failed: ${err instanceof NotifyError ? `${err.message} [${err.code}]` : (err as Error).message}`);
  }
}

/**
 * The pause before the next round: the interval, or less when something comes due sooner (a
 * scheduled campaign, a deferred send's next attempt, a drip step, an outgoing webhook's retry; see
 * nextWake). `since`: when the round just run began.
 */
export async function untilNext(notify: Pick<Notify, 'context'>, intervalMs: number, since = notify.context.clock.now()): Promise<number> {
  const next = await nextWake(notify.context, since).catch(() => undefined);
  if (next === undefined) return intervalMs;
  return Math.max(0, Math.min(intervalMs, next - notify.context.clock.now()));
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
