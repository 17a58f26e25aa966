import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '../context.ts';
import { minutes } from './clock.ts';
import type { Dispatcher, PreparedMessage } from './dispatch.ts';
import type { ClaimedEnrollment, Settlement } from './storage/enrollments.ts';
import { type SendOutcome, type StepSend, stepKey } from './storage/sends.ts';
import { newToken } from './tokens.ts';
import { type DripRunResult, isSuppressedStatus, type RecipientContact, type SendRecord, type Step } from './types.ts';

/** What one run did, beyond the public { sent, failed, retried, reclaimed } (the CLI prints it). */
export interface DripRunDetail extends DripRunResult {
  /** enrollments claimed (at most batchSize) */
  claimed: number;
  /** enrollments cancelled because their contact was suppressed when its step came up */
  cancelled: number;
  /** steps found already delivered by an earlier, interrupted run: advanced without sending */
  advanced: number;
  /** steps a crashed run left in flight, past staleLockMinutes: failed/interrupted, not resent */
  interrupted: number;
}

const CHUNK = 100;
/** deliveries in flight at once when not throttled (as campaign runs) */
const CONCURRENCY = 8;

/**
 * One run of notify:process-drips (spec parts 3 and 7, DESIGN.md section 4).
 *
 * 1. `processing` enrollments claimed more than staleLockMinutes ago go back to `active`.
 * 2. Due `active` enrollments are claimed in chunks (at most batchSize per run) under a fresh claim token.
 * 3. Each claimed step gets its send row BEFORE the mailer is called, unique per enrollment and
 *    step: no crash, reclaim or overlapping run can deliver a step twice. A reclaimed step whose row
 *    says `sent` only advances; one left `sending` past staleLockMinutes is marked failed with reason
 *    `interrupted` and not resent (at most once, as notify:send-campaign: the provider may have taken it).
 * 4. Outcomes and enrollment transitions are written in one transaction per chunk; the transition
 *    applies only while the claim token is still ours, so a run whose claim was reclaimed changes nothing.
 */
export interface DripRunOptions {
  /** stops claiming more once aborted: the chunk in hand is delivered and recorded (worker shutdown) */
  signal?: AbortSignal;
  /** enrollments claimed per round trip (default 100) */
  chunkSize?: number;
}

export async function runDrips(ctx: Context, opts: DripRunOptions = {}): Promise<DripRunDetail> {
  const result: DripRunDetail = { sent: 0, failed: 0, retried: 0, reclaimed: 0, claimed: 0, cancelled: 0, advanced: 0, interrupted: 0 };
  const { batchSize, throttleMs, staleLockMinutes } = ctx.config;
  const started = ctx.clock.now();
  result.reclaimed = await ctx.store.enrollments.reclaimStale(started - minutes(staleLockMinutes), started);
  if (result.reclaimed > 0) ctx.log.warn({ reclaimed: result.reclaimed }, `${result.reclaimed} drip enrollments left 'processing' by an interrupted run returned to 'active'`);
  const run: Run = { ctx, dispatcher: ctx.dispatcher, steps: new Map(), result, throttled: false };
  const chunk = throttleMs > 0 ? Math.max(1, Math.min(opts.chunkSize ?? CHUNK, Math.floor(60_000 / throttleMs))) : CHUNK;
  let budget = batchSize;
  while (budget > 0 && !opts.signal?.aborted) {
    const limit = Math.min(chunk, budget);
    const claimToken = newToken();
    const claimed = await ctx.store.enrollments.claimDue(ctx.clock.now(), limit, claimToken);
    if (claimed.length === 0) break;
    budget -= claimed.length;
    result.claimed += claimed.length;
    await processChunk(run, claimed, claimToken);
    if (claimed.length < limit) break;
  }
  return result;
}

interface Run {
  ctx: Context;
  dispatcher: Dispatcher;
  /** steps by sequence id, loaded once per run */
  steps: Map<number, Step[]>;
  result: DripRunDetail;
  /** a delivery already happened in this run (throttleMs sleeps before the next) */
  throttled: boolean;
}

interface Job {
  enrollment: ClaimedEnrollment;
  step: Step;
  contact: RecipientContact;
  send: SendRecord;
}

async function processChunk(run: Run, claimed: ClaimedEnrollment[], claimToken: string): Promise<void> {
  const { ctx, result } = run;
  const now = ctx.clock.now();
  const settlements: Settlement[] = [];
  const keep = (e: ClaimedEnrollment, patch: Partial<Settlement>) =>
    settlements.push({ id: e.id, status: 'active', step_index: e.step_index, next_send_at: e.next_send_at?.getTime() ?? now, attempts: e.attempts, last_error: e.last_error, ...patch });

  const missing = [...new Set(claimed.map((e) => e.sequence_id))].filter((id) => !run.steps.has(id));
  if (missing.length > 0) for (const [id, steps] of await ctx.store.sequences.stepsOf(missing)) run.steps.set(id, steps);
  const contacts = await ctx.store.contacts.recipients(claimed.map((e) => e.contact_id));

  const candidates: { enrollment: ClaimedEnrollment; step: Step; contact: RecipientContact }[] = [];
  for (const e of claimed) {
    const step = run.steps.get(e.sequence_id)?.[e.step_index];
    const contact = contacts.get(e.contact_id);
    if (!step) keep(e, { status: 'completed', next_send_at: null });
    else if (!contact || isSuppressedStatus(contact.status)) {
      keep(e, { status: 'cancelled', next_send_at: null });
      result.cancelled++;
    } else candidates.push({ enrollment: e, step, contact });
  }

  const created = await ctx.store.sends.claimSteps(
    candidates.map(({ enrollment: e, step, contact }) => ({
      token: newToken(),
      contact_id: contact.id,
      enrollment_id: e.id,
      step_id: step.id,
      step_index: e.step_index,
      to_email: contact.email,
      subject: step.subject,
      status: 'sending' as const,
    })),
    now,
  );
  // one step per enrollment in a chunk: the rows this insert created, by enrollment
  const mine = new Map(created.map((s) => [s.enrollment_id!, s]));
  const jobs: Job[] = [];
  const taken = candidates.filter((c) => !mine.has(c.enrollment.id));
  const existing = await ctx.store.sends.forSteps(taken.map((c) => ({ enrollment_id: c.enrollment.id, step_index: c.enrollment.step_index })));
  for (const c of candidates) {
    const own = mine.get(c.enrollment.id);
    if (own) jobs.push({ ...c, send: own });
    else await resume(run, c, existing.get(stepKey(c.enrollment.id, c.enrollment.step_index)), now, jobs, keep);
  }

  const outcomes = await deliverAll(run, jobs);
  const finished = ctx.clock.now();
  const failures = new Map<number, string>();
  const retries = new Set<number>();
  for (const [i, job] of jobs.entries()) {
    const o = outcomes[i];
    const e = job.enrollment;
    if (o.status === 'sent') {
      result.sent++;
      settlements.push(advance(run, e, finished));
    } else if (o.status === 'suppressed') {
      result.cancelled++;
      keep(e, { status: 'cancelled', next_send_at: null });
    } else {
      const attempts = e.attempts + 1;
      const error = o.error ?? 'failed';
      if (attempts >= ctx.config.maxRetries) {
        failures.set(e.id, error);
        keep(e, { status: 'failed', next_send_at: null, attempts, last_error: error });
      } else {
        retries.add(e.id);
        keep(e, { next_send_at: finished + minutes(ctx.config.retryDelayMinutes), attempts, last_error: error });
      }
    }
  }

  const changed = await ctx.store.transaction(async (tx) => {
    await tx.sends.finish(outcomes, finished);
    return tx.enrollments.settle(claimToken, settlements, finished);
  });
  if (changed.size < settlements.length) ctx.log.warn({ lost: settlements.length - changed.size }, 'drip claims taken back before this run finished them (reclaimed as stale or cancelled): left as they are');
  for (const s of settlements) {
    if (!changed.has(s.id)) continue;
    if (s.status === 'failed') {
      result.failed++;
      const e = claimed.find((c) => c.id === s.id)!;
      ctx.events.emit('notify_enrollment_failed', {
        enrollment: { id: e.id, sequence_id: e.sequence_id, contact_id: e.contact_id, status: 'failed', step_index: s.step_index, next_send_at: null, attempts: s.attempts, last_error: s.last_error },
        error: failures.get(s.id) ?? s.last_error ?? 'failed',
      });
    } else if (retries.has(s.id)) result.retried++;
  }
}

/** After a successful send: the next step, due its delay from now, or completed. */
function advance(run: Run, e: ClaimedEnrollment, now: number): Settlement {
  const next = run.steps.get(e.sequence_id)?.[e.step_index + 1];
  return next
    ? { id: e.id, status: 'active', step_index: e.step_index + 1, next_send_at: now + minutes(next.delay_minutes), attempts: 0, last_error: null }
    : { id: e.id, status: 'completed', step_index: e.step_index + 1, next_send_at: null, attempts: 0, last_error: null };
}

/**
 * The step already has a send row: an earlier run got this far. Decides from the row alone, so a
 * step is never delivered twice.
 */
async function resume(run: Run, c: Omit<Job, 'send'>, row: StepSend | undefined, now: number, jobs: Job[], keep: (e: ClaimedEnrollment, p: Partial<Settlement>) => void): Promise<void> {
  const { ctx, result } = run;
  const e = c.enrollment;
  const stale = now - minutes(ctx.config.staleLockMinutes);
  if (!row) {
    // the row vanished between the insert and the read (it cannot: rows are never deleted); try again later
    keep(e, {});
  } else if (row.status === 'sent') {
    result.advanced++;
    ctx.log.info({ enrollmentId: e.id, step: e.step_index, sendId: row.id }, 'drip step already delivered by an interrupted run: advancing without sending');
    keep(e, advance(run, e, now));
  } else if (row.status === 'suppressed') {
    result.cancelled++;
    keep(e, { status: 'cancelled', next_send_at: null });
  } else if (row.status === 'failed' && row.error === 'interrupted') {
    keep(e, advance(run, e, now));
  } else if (row.status === 'failed') {
    // the last attempt failed and was recorded: this run makes the next attempt with the same row
    if (await ctx.store.sends.retake(row.id, now)) jobs.push({ ...c, send: { ...row, status: 'sending' } });
    else keep(e, {});
  } else if (await ctx.store.sends.interrupt(row.id, stale, now)) {
    result.interrupted++;
    ctx.log.warn({ enrollmentId: e.id, step: e.step_index, sendId: row.id }, "drip step left 'sending' by an interrupted run marked failed (interrupted), not resent; the sequence continues");
    keep(e, advance(run, e, now));
  } else {
    // another run is delivering it right now (its claim went stale mid-batch): look again once that row is stale
    keep(e, { next_send_at: row.updated_at + minutes(ctx.config.staleLockMinutes) + 1000 });
  }
}

async function deliverAll(run: Run, jobs: Job[]): Promise<SendOutcome[]> {
  const { ctx, dispatcher } = run;
  const throttleMs = ctx.config.throttleMs;
  const outcomes: SendOutcome[] = new Array(jobs.length);
  const prepared = new Map<number, Promise<PreparedMessage>>();
  const prepare = (step: Step) => {
    let p = prepared.get(step.id);
    if (!p) {
      p = dispatcher.prepare(`s${step.id}`, specOf(step));
      prepared.set(step.id, p);
    }
    return p;
  };
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      const job = jobs[i];
      if (throttleMs > 0 && run.throttled) await sleep(throttleMs);
      run.throttled = true;
      let message: PreparedMessage;
      try {
        message = await prepare(job.step);
      } catch (err) {
        outcomes[i] = { id: job.send.id, status: 'failed', error: String((err as Error)?.message ?? err).slice(0, 500) };
        continue;
      }
      outcomes[i] = await dispatcher.deliver(message, { send: job.send, contact: job.contact });
    }
  };
  await Promise.all(Array.from({ length: throttleMs > 0 ? 1 : Math.min(CONCURRENCY, jobs.length) }, worker));
  return outcomes;
}

function specOf(step: Step) {
  return {
    subject: step.subject,
    html: step.html,
    markdown: step.markdown,
    markdownFile: step.markdown_file,
    text: step.text,
    layout: step.layout,
    data: { step: { position: step.position + 1, sequence_id: step.sequence_id } },
  };
}
