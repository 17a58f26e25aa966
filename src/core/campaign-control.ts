import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '../context.ts';
import { minutes } from './clock.ts';
import type { CampaignStatus } from './types.ts';

/**
 * How a run learns that its campaign was stopped (paused, cancelled, auto-paused). Runs in this
 * process are told at once; runs in other processes read the status every POLL_MS and before
 * each chunk. A stopped run starts no further send, lets those in flight finish and be recorded,
 * and gives back the rows it had claimed but not handed to the mailer.
 */
const POLL_MS = 100;
/** how long pause and cancel wait for the runs of other processes to let go */
const SETTLE_MS = 30_000;
const STOPS: readonly CampaignStatus[] = ['paused', 'cancelled', 'draft', 'scheduled'];

export interface RunControl {
  /** true once the campaign is paused or cancelled (the delivery loop reads it before each send) */
  readonly stopped: boolean;
  /** reads the status now; true when stopped */
  refresh(): Promise<boolean>;
  close(): void;
}

/** this instance's campaign runs in this process, by campaign: how a pause reaches a run at once */
export type LocalRuns = Map<number, Set<() => void>>;

export const createLocalRuns = (): LocalRuns => new Map();

export function watchRun(ctx: Pick<Context, 'store' | 'runs'>, campaignId: number): RunControl {
  let stopped = false;
  let reading = false;
  const stop = () => {
    stopped = true;
  };
  const read = async () => {
    // `sent` is not a stop: another run marks it once every member has a row, while this one may
    // still be sending the rows it claimed
    const status = await ctx.store.campaigns.statusOf(campaignId);
    if (status === undefined || STOPS.includes(status)) stop();
    return stopped;
  };
  const timer = setInterval(() => {
    if (reading || stopped) return;
    reading = true;
    // a failed read changes nothing: the chunk boundary reads again, and the recording fails the run if the database is gone
    read()
      .catch(() => {})
      .finally(() => {
        reading = false;
      });
  }, POLL_MS);
  timer.unref();
  const byCampaign = ctx.runs;
  const runs = byCampaign.get(campaignId) ?? new Set();
  byCampaign.set(campaignId, runs.add(stop));
  return {
    get stopped() {
      return stopped;
    },
    refresh: () => (stopped ? Promise.resolve(true) : read()),
    close() {
      clearInterval(timer);
      runs.delete(stop);
      if (runs.size === 0) byCampaign.delete(campaignId);
    },
  };
}

/** tells this process's runs of the campaign to stop now */
export function stopLocalRuns(ctx: Pick<Context, 'runs'>, campaignId: number): void {
  for (const stop of ctx.runs.get(campaignId) ?? []) stop();
}

/**
 * Resolves once no live run holds a send row of the campaign in `sending`: every message that was
 * going to leave has left and is recorded. Rows older than staleLockMinutes belong to a crashed
 * run (they can no longer leave). Returns the rows still held when SETTLE_MS ran out (a mail server
 * that takes that long to answer the sends in flight).
 */
export async function waitForRunsToStop(ctx: Pick<Context, 'store' | 'clock' | 'config' | 'runs'>, campaignId: number, settleMs = SETTLE_MS): Promise<number> {
  stopLocalRuns(ctx, campaignId);
  const deadline = Date.now() + settleMs;
  for (;;) {
    const held = await ctx.store.campaigns.countSending(campaignId, ctx.clock.now() - minutes(ctx.config.staleLockMinutes));
    if (held === 0 || Date.now() >= deadline) return held;
    await sleep(20);
  }
}
