import type { Context } from '../context.ts';
import { minutes } from './clock.ts';
import { settleStepOutcome } from './deferral.ts';
import type { Delivered, DeliveryJob, DeliveryRun } from './delivery.ts';
import type { PreparedMessage } from './dispatch.ts';
import type { DripRunDetail } from './drip-run.ts';
import type { ClaimedEnrollment, Settlement, StepGroupResult, StepStart } from './storage/enrollments.ts';
import type { OutboundEvent } from './storage/outbound.ts';
import type { SendOutcome, StepSend } from './storage/sends.ts';
import type { Enrollment, RecipientContact, SendRecord, Step } from './types.ts';

/**
 * What happens to a claimed drip enrollment: decided from its step's outcome (or from the send row
 * an earlier run left), written together with that outcome, and applied only while the claim is
 * still the run's own.
 */

/** One notify:process-drips run in progress. */
export interface DripRun {
  ctx: Context;
  /** steps by sequence id, loaded once per run */
  steps: Map<number, Step[]>;
  /** compiled steps by step id, once per run */
  prepared: Map<number, Promise<PreparedMessage>>;
  result: DripRunDetail;
  delivery: DeliveryRun<StepJob>;
}

/** A step to deliver, its send row created (`queued` until a pool slot starts it). */
export interface StepJob extends DeliveryJob {
  enrollment: ClaimedEnrollment;
  step: Step;
  contact: RecipientContact;
  send: SendRecord;
}

/** A claimed enrollment's next state; `retry` marks a failed attempt that will be tried again. */
export interface Decision {
  enrollment: ClaimedEnrollment;
  settlement: Settlement;
  retry?: boolean;
}

export const INTERRUPTED = "drip step left 'sending' by an interrupted run marked failed (interrupted), not resent; the sequence continues";

/** The claimed enrollment where it was, with `patch` applied. */
export function keep(e: ClaimedEnrollment, now: number, patch: Partial<Settlement>): Decision {
  const settlement = { id: e.id, status: 'active' as const, step_index: e.step_index, next_send_at: e.next_send_at?.getTime() ?? now, attempts: e.attempts, last_error: e.last_error, ...patch };
  return { enrollment: e, settlement };
}

/**
 * The step already has a send row: an earlier run got this far. Decides from the row alone, so a
 * step is never delivered twice: a job for this run, or where the enrollment goes without one.
 */
export async function resume(run: DripRun, c: Omit<StepJob, 'send'>, row: StepSend | undefined, now: number): Promise<StepJob | Decision> {
  const { ctx, result } = run;
  const e = c.enrollment;
  // the row vanished between the insert and the read (it cannot: rows are never deleted); try again later
  if (!row) return keep(e, now, {});
  if (row.status === 'sent') {
    result.advanced++;
    ctx.log.info({ enrollmentId: e.id, step: e.step_index, sendId: row.id }, 'drip step already delivered by an interrupted run: advancing without sending');
    return keep(e, now, advance(run, e, now));
  }
  // no step row is ever `suppressed`: a suppressed contact's enrollment is cancelled before its row
  // is created (processChunk), and the delivery checks the same contact record
  if (row.status === 'cancelled') {
    result.cancelled++;
    return keep(e, now, { status: 'cancelled', next_send_at: null });
  }
  if (row.status === 'failed' && row.error === 'interrupted') return keep(e, now, advance(run, e, now));
  // never handed to the mailer (its run stopped or died first): this run sends it, if its start
  // finds the row still `queued` (a run whose claim was taken back starts nothing)
  if (row.status === 'queued') return { ...c, send: row };
  // the last attempt failed and waits for another (`failed` from before deferral existed): this run
  // makes the next attempt with the same row
  if (row.status === 'deferred' || row.status === 'failed') return (await ctx.store.sends.retake(row.id, now)) ? { ...c, send: { ...row, status: 'queued' } } : keep(e, now, {});
  if (await ctx.store.sends.interrupt(row.id, now - minutes(ctx.config.staleLockMinutes), now)) {
    result.interrupted++;
    ctx.log.warn({ enrollmentId: e.id, step: e.step_index, sendId: row.id }, INTERRUPTED);
    return keep(e, now, advance(run, e, now));
  }
  // another run is delivering it right now (its claim went stale mid-batch): look again once that row is stale
  return keep(e, now, { next_send_at: row.updated_at + minutes(ctx.config.staleLockMinutes) + 1000 });
}

/**
 * Steps a group of pool slots is about to hand to the mailer become `sending`, in one write with
 * the steps delivered meanwhile; returns the jobs started (a step whose claim this run lost is not).
 * A crash leaves in doubt only the `sending` rows: at most one per slot.
 */
export async function startSteps(run: DripRun, starting: StepJob[], group: Delivered<StepJob>[]): Promise<StepJob[]> {
  const { decided, outcomes } = decideDelivered(run, group);
  const started = await writeDecisions(run, decided, outcomes, starting);
  return starting.filter((j) => started.has(j.send.id));
}

/** A group of delivered steps: outcome, the enrollment's next state, both written together. */
export async function recordDelivered(run: DripRun, group: Delivered<StepJob>[]): Promise<void> {
  const { decided, outcomes } = decideDelivered(run, group);
  await writeDecisions(run, decided, outcomes);
}

/** each delivered step's outcome as recorded and its enrollment's next state */
function decideDelivered(run: DripRun, group: Delivered<StepJob>[]): { decided: Decision[]; outcomes: SendOutcome[] } {
  const { ctx, result } = run;
  const finished = ctx.clock.now();
  const outcomes = group.map(({ job, outcome }) => settleStepOutcome(outcome, job.enrollment.attempts + 1, ctx.config, finished));
  const decided = group.map(({ job }, i): Decision => {
    const e = job.enrollment;
    const outcome = outcomes[i];
    if (outcome.status === 'sent') {
      result.sent++;
      return { enrollment: e, settlement: advance(run, e, finished) };
    }
    const attempts = e.attempts + 1;
    const error = outcome.error ?? 'failed';
    // the step's row waits as `deferred` and the enrollment is due again at its next attempt
    if (outcome.status === 'deferred') return { ...keep(e, finished, { next_send_at: outcome.next_attempt_at, attempts, last_error: error }), retry: true };
    return keep(e, finished, { status: 'failed', next_send_at: null, attempts, last_error: error });
  });
  return { decided, outcomes };
}

/**
 * Writes the starts of `starting`, outcomes, settlements and a notify_enrollment_failed for each
 * enrollment that failed for good in one transaction, each start and settlement (and its event)
 * only while its claim is still this run's; then counts what changed. Returns the send ids started.
 */
export async function writeDecisions(run: DripRun, decided: Decision[], outcomes: SendOutcome[], starting: StepJob[] = []): Promise<Set<number>> {
  const { ctx, result } = run;
  if (decided.length === 0 && outcomes.length === 0 && starting.length === 0) return new Set();
  const now = ctx.clock.now();
  const start = starting.map((j) => ({ id: j.send.id, claim_token: j.enrollment.claim_token }));
  // the common group (nothing failed for good: no notify_enrollment_failed to write) goes through the
  // same fixed-statement group commit as a campaign's sends; the rare one with a failure through the repositories
  const { started, settled: changed } = decided.every((d) => d.settlement.status !== 'failed')
    ? await ctx.store.enrollments.writeStepGroup({ start, outcomes, settlements: decided.map((d) => ({ ...d.settlement, claim_token: d.enrollment.claim_token })) }, now)
    : await writeWithFailures(ctx, decided, outcomes, start, now);
  if (changed.size < decided.length) {
    ctx.log.warn({ lost: decided.length - changed.size }, 'drip claims taken back before this run finished them (reclaimed as stale or cancelled): left as they are');
    // a step deferred just as its enrollment was cancelled (the contact unsubscribed meanwhile) would wait for ever
    for (const d of decided) {
      if (!d.retry || changed.has(d.settlement.id)) continue;
      if ((await ctx.store.enrollments.getById(d.enrollment.id))?.status === 'cancelled') await ctx.store.sends.cancelWaiting({ contactId: d.enrollment.contact_id }, now);
    }
  }
  for (const { settlement: s, retry } of decided) {
    if (!changed.has(s.id)) continue;
    if (retry) result.retried++;
    if (s.status === 'failed') result.failed++;
  }
  return started;
}

/** A group with an enrollment failed for good: its notify_enrollment_failed is written with it, through the repositories. */
function writeWithFailures(ctx: Context, decided: Decision[], outcomes: SendOutcome[], start: StepStart[], now: number): Promise<StepGroupResult> {
  const byClaim = new Map<string, Settlement[]>();
  for (const d of decided) byClaim.set(d.enrollment.claim_token, [...(byClaim.get(d.enrollment.claim_token) ?? []), d.settlement]);
  return ctx.store.transaction(async (tx) => {
    const started = await tx.enrollments.startSteps(start, now);
    if (outcomes.length > 0) await tx.sends.finish(outcomes, now);
    const ids = new Set<number>();
    for (const [claimToken, settlements] of byClaim) for (const id of await tx.enrollments.settle(claimToken, settlements, now)) ids.add(id);
    const failed = decided.filter((d) => d.settlement.status === 'failed' && ids.has(d.settlement.id));
    if (failed.length > 0) await tx.outbox.add(failed.map(enrollmentFailedEvent), now);
    return { started, settled: ids };
  });
}

/** In-process `notify_enrollment_failed`, on the wire `notify:enrollment.failed`: the same plain payload. */
function enrollmentFailedEvent({ enrollment: e, settlement: s }: Decision): OutboundEvent {
  const enrollment: Enrollment = { id: e.id, sequence_id: e.sequence_id, contact_id: e.contact_id, status: 'failed', step_index: s.step_index, next_send_at: null, attempts: s.attempts, last_error: s.last_error };
  return { type: 'notify:enrollment.failed', data: { enrollment, error: s.last_error ?? 'failed' } };
}

/** After a successful send: the next step, due its delay from now, or completed. */
function advance(run: DripRun, e: ClaimedEnrollment, now: number): Settlement {
  const next = run.steps.get(e.sequence_id)?.[e.step_index + 1];
  return next
    ? { id: e.id, status: 'active', step_index: e.step_index + 1, next_send_at: now + minutes(next.delay_minutes), attempts: 0, last_error: null }
    : { id: e.id, status: 'completed', step_index: e.step_index + 1, next_send_at: null, attempts: 0, last_error: null };
}
