import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '../context.ts';
import { DEFAULT_CONCURRENCY } from './send-turns.ts';
import type { DeliveryTarget, PreparedMessage } from './dispatch.ts';
import { classifyFailure } from './failure.ts';
import { createGroupWriter } from './group-writer.ts';
import type { SendOutcome } from './storage/sends.ts';

/**
 * The one delivery loop: campaigns, drip steps, one-off and test sends all go through it. It owns
 * the pool (how many deliveries are in flight), `throttleMs` (a pause between every two sends of
 * the whole run, whatever the chunks), and outcome recording: each outcome is handed to the
 * caller's `record` as it happens, in groups of up to 20 ms, so a crash leaves in doubt only the
 * sends in flight and the last group. With `start`, a send is committed as started, in one write
 * with the outcomes that came in meanwhile, before the mailer may let it leave: the commit
 * overlaps the rendering and the SMTP transaction up to the end of its data, so a slot does not
 * sit idle through it, and a crash leaves in doubt only the sends in flight, at most one per slot.
 */
export interface DeliveryJob extends DeliveryTarget {
  /** the message, or how to get it (a drip step compiles on first use; a failure there fails the job) */
  message: PreparedMessage | (() => Promise<PreparedMessage>);
}

export interface Delivered<J extends DeliveryJob> {
  job: J;
  outcome: SendOutcome;
}

export interface DeliveryRun<J extends DeliveryJob> {
  /**
   * delivers the jobs; resolves with their outcomes in job order once all are delivered (not
   * necessarily recorded). A job not started because `stop` said so has no outcome (a hole).
   */
  send(jobs: J[]): Promise<SendOutcome[]>;
  /** throws the first failed recording: a run stops when its database does */
  check(): void;
  /** resolves once every outcome is recorded; throws the first failed recording */
  drain(): Promise<void>;
}

export interface DeliveryOptions<J extends DeliveryJob> {
  /** writes a group of outcomes; called in order, one group at a time */
  record(group: Delivered<J>[]): Promise<void>;
  /**
   * Commits `starting` as handed to the mailer, in one write with the outcomes in `group` (the
   * slots that start together share it). Returns the jobs that may be sent: a job left out (another
   * run has it, the campaign stopped) is skipped and has no outcome.
   */
  start?(starting: J[], group: Delivered<J>[]): Promise<J[]>;
  /** read before each send: true starts no further one (a paused or cancelled campaign) */
  stop?(): boolean;
}

/**
 * How long an outcome waits for others to share its write. Measured on SQLite against recording per
 * chunk: 5 ms cost 12% of dispatch throughput, 10 ms 12%, 20 ms nothing measurable.
 */
const GROUP_MS = 20;
/**
 * How long a slot's start may wait for other slots to share its write while others are still in
 * the mailer (all slots but one waiting, or none delivering, writes at once). Writing each start
 * at once averaged 1.5 messages per commit against the loopback sink, and on SQLite the commit
 * alone cost as much as its statements; waiting (10 ms at most, against a loopback sink's ~1 ms
 * answers) gave 3.2 per commit and a quarter less CPU per message (loaded machine, same run).
 */
const START_WAIT_MS = 10;
/** rows or enrollments claimed per round trip */
const CHUNK = 100;

/**
 * How many to claim at once. A throttled run claims at most a minute's worth, so nothing it
 * claimed waits long enough to look abandoned.
 */
export function chunkSize(throttleMs: number, size = CHUNK): number {
  return throttleMs > 0 ? Math.max(1, Math.min(size, Math.floor(60_000 / throttleMs))) : size;
}

/** every address a message goes to: what sending-rate control counts per domain */
function recipientsOf(job: DeliveryTarget): string[] {
  return [...(job.to ?? (job.contact ? [job.contact.email] : [])), ...(job.cc ?? []), ...(job.bcc ?? [])];
}

/** one group's outcomes recorded, or (with a `start` hook) its starts and outcomes written together; the starts granted join `granted` */
async function writeGroup<J extends DeliveryJob>(opts: DeliveryOptions<J>, granted: Set<J>, items: (Delivered<J> | { job: J })[]): Promise<void> {
  const done = items.filter((i): i is Delivered<J> => 'outcome' in i);
  if (done.length === items.length || !opts.start) return opts.record(done);
  for (const job of await opts.start(
    items.filter((i) => !('outcome' in i)).map((i) => i.job),
    done,
  ))
    granted.add(job);
}

/** the job's message (built now when it is a function) handed to the mailer, to leave once `ready`; a message that cannot be built fails the send */
async function deliverOne<J extends DeliveryJob>(dispatcher: Context['dispatcher'], job: J, ready: Promise<boolean> | undefined): Promise<SendOutcome> {
  // a failed start write is the run's failure, thrown where the slot awaits `ready`, never unhandled
  ready?.catch(() => {});
  let message: PreparedMessage;
  try {
    message = typeof job.message === 'function' ? await job.message() : job.message;
  } catch (err) {
    const failure = classifyFailure(err);
    return { id: job.send.id, status: 'failed', error: failure.reason, transient: failure.transient };
  }
  return dispatcher.deliver(message, job, ready);
}

/**
 * The job's sending turn under the rate limits (`left` gives it back to the pacer) and one of the
 * instance's turns, shared with the other runs of this process (`done` gives it back), so a send
 * marked started is one a connection has taken, not one waiting in the pool's queue. Undefined,
 * both given back, when the run was stopped meanwhile.
 */
async function takeTurn(ctx: Pick<Context, 'dispatcher' | 'pacer'>, job: DeliveryJob, stop: (() => boolean) | undefined) {
  const left = ctx.pacer ? await ctx.pacer.acquire(recipientsOf(job)) : undefined;
  const done = await ctx.dispatcher.turns.take();
  if (!stop?.()) return { left, done };
  done();
  left?.();
  return undefined;
}

export function createDeliveryRun<J extends DeliveryJob>(ctx: Pick<Context, 'config' | 'dispatcher' | 'pacer'>, opts: DeliveryOptions<J>): DeliveryRun<J> {
  const { throttleMs } = ctx.config;
  const granted = new Set<J>();
  /** slots whose next send waits for its start to be written, and slots whose send may leave (in the mailer) */
  let starting = 0;
  let delivering = 0;
  let slots = 0;
  const writer = createGroupWriter<Delivered<J> | { job: J }>((items) => {
    starting = 0;
    return writeGroup(opts, granted, items);
  }, GROUP_MS);
  /** true once the job is committed as started (the slot's send may leave: it counts as in the mailer) */
  const begin = async (job: J): Promise<boolean> => {
    writer.add({ job });
    starting++;
    // at once when all slots but one wait or none is in the mailer; else a little later, shared by the slots finishing meanwhile
    await (starting >= slots - 1 || delivering === 0 ? writer.flush() : writer.flush(START_WAIT_MS));
    if (!granted.delete(job)) return false;
    delivering++;
    return true;
  };
  /** a slot leaves the mailer: with none left there, the starts waiting go now */
  const delivered = () => {
    if (--delivering === 0 && starting > 0) writer.flush().catch(() => {});
  };
  let started = false;

  return {
    async send(jobs) {
      const outcomes: SendOutcome[] = new Array(jobs.length);
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) {
          if (started && throttleMs > 0) await sleep(throttleMs);
          if (opts.stop?.()) return;
          started = true;
          const i = next++;
          const turn = await takeTurn(ctx, jobs[i], opts.stop);
          // a stop that came while waiting for a sending turn leaves this job unstarted (a hole)
          if (!turn) return;
          const { left, done } = turn;
          // rendered and all but handed over while its start commits; it leaves only once committed, a start refused holds it back
          const ready = opts.start ? begin(jobs[i]) : undefined;
          if (!ready) delivering++;
          const outcome = await deliverOne(ctx.dispatcher, jobs[i], ready).finally(done);
          left?.();
          if (ready && !(await ready)) continue;
          delivered();
          outcomes[i] = outcome;
          writer.add({ job: jobs[i], outcome });
        }
      };
      slots = throttleMs > 0 ? 1 : Math.min(Math.max(1, ctx.dispatcher.concurrency ?? DEFAULT_CONCURRENCY), jobs.length);
      await Promise.all(Array.from({ length: slots }, worker));
      return outcomes;
    },
    check: () => writer.check(),
    drain: () => writer.drain(),
  };
}
