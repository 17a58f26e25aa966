import type { Config } from '../config.ts';
import { listHeaders } from './list-headers.ts';
import type { Context } from '../context.ts';
import { minutes } from './clock.ts';
import { chunkSize, createDeliveryRun } from './delivery.ts';
import type { PreparedMessage } from './dispatch.ts';
import { type Decision, type DripRun, INTERRUPTED, keep, recordDelivered, resume, startSteps, type StepJob, writeDecisions } from './drip-decisions.ts';
import type { ClaimedEnrollment } from './storage/enrollments.ts';
import { stepKey } from './storage/sends.ts';
import { newToken, newTokens } from './tokens.ts';
import { type DripRunResult, isSuppressedStatus, type Step } from './types.ts';

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

export interface DripRunOptions {
  /** stops claiming more once aborted: the chunk in hand is delivered and recorded (worker shutdown) */
  signal?: AbortSignal;
  /** enrollments claimed per round trip (default 100) */
  chunkSize?: number;
}

/**
 * One run of notify:process-drips.
 *
 * 1. `processing` enrollments claimed more than staleLockMinutes ago go back to `active`.
 * 2. Due `active` enrollments are claimed in chunks (at most batchSize per run) under a fresh claim token.
 * 3. Each claimed step gets its send row, `queued`, unique per enrollment and step, in one INSERT
 *    per chunk: no crash, reclaim or overlapping run can deliver a step twice.
 * 4. A row becomes `sending` (committed, in groups) just before a pool slot hands it to the mailer,
 *    only while the claim is still ours, as a campaign's sends do: a crash leaves in doubt only the
 *    steps in flight, at most one per slot. A reclaimed step whose row says `sent` only advances;
 *    one left `queued` is sent; one left `sending` past staleLockMinutes is marked failed with reason
 *    `interrupted` and not resent (at most once: the provider may have taken it).
 * 5. Each outcome and its enrollment's transition are written together as the step is delivered
 *    (grouped over up to 20 ms); the transition applies only while the claim token is still
 *    ours, so a run whose claim was reclaimed changes nothing.
 */
export async function runDrips(ctx: Context, opts: DripRunOptions = {}): Promise<DripRunDetail> {
  const result: DripRunDetail = { sent: 0, failed: 0, retried: 0, reclaimed: 0, claimed: 0, cancelled: 0, advanced: 0, interrupted: 0 };
  const { batchSize, staleLockMinutes } = ctx.config;
  const started = ctx.clock.now();
  result.reclaimed = await ctx.store.enrollments.reclaimStale(started - minutes(staleLockMinutes), started);
  if (result.reclaimed > 0) ctx.log.warn({ reclaimed: result.reclaimed }, `${result.reclaimed} drip enrollments left 'processing' by an interrupted run returned to 'active'`);
  // settled at once, as a campaign run does, not when their enrollments come up: after a crash only
  // the steps of the last one are in doubt
  for (const s of await ctx.store.enrollments.interruptStaleSteps(started - minutes(staleLockMinutes), started)) {
    result.interrupted++;
    ctx.log.warn({ enrollmentId: s.enrollment_id, step: s.step_index, sendId: s.id }, INTERRUPTED);
  }
  const run: DripRun = {
    ctx,
    steps: new Map(),
    prepared: new Map(),
    result,
    delivery: createDeliveryRun<StepJob>(ctx, { record: (group) => recordDelivered(run, group), start: (starting, group) => startSteps(run, starting, group) }),
  };
  const chunk = chunkSize(ctx.config.throttleMs, opts.chunkSize);
  let budget = batchSize;
  /** outcomes of this run may still be waiting for their group commit */
  let unsettled = false;
  while (budget > 0 && !opts.signal?.aborted) {
    const limit = Math.min(chunk, budget);
    const claimed = await ctx.store.enrollments.claimDue(ctx.clock.now(), limit, newToken());
    budget -= claimed.length;
    result.claimed += claimed.length;
    const jobs = claimed.length > 0 ? await processChunk(run, claimed) : [];
    if (jobs.length > 0) {
      const outcomes = await run.delivery.send(jobs);
      run.delivery.check();
      await leftUnstarted(run, jobs.filter((_, i) => outcomes[i] === undefined));
      unsettled = true;
    }
    if (claimed.length < limit) {
      // The next chunk is claimed while this one's last outcomes wait for the group commit the next
      // chunk's first starts share (no commit of their own). Before the run ends, a last claim sees
      // them settled, so a step they made due at once is sent by this run.
      if (!unsettled) break;
      await run.delivery.drain();
      unsettled = false;
    }
  }
  await run.delivery.drain();
  return result;
}

/**
 * Decides every claimed enrollment that needs no delivery now (settled at once) and returns the
 * jobs of those that do, each with its send row created.
 */
async function processChunk(run: DripRun, claimed: ClaimedEnrollment[]): Promise<StepJob[]> {
  const { ctx, result } = run;
  const now = ctx.clock.now();
  const decided: Decision[] = [];
  const missing = [...new Set(claimed.map((e) => e.sequence_id))].filter((id) => !run.steps.has(id));
  if (missing.length > 0) for (const [id, steps] of await ctx.store.sequences.stepsOf(missing)) run.steps.set(id, steps);
  const contacts = await ctx.store.contacts.recipients(claimed.map((e) => e.contact_id));

  const candidates: Omit<StepJob, 'send'>[] = [];
  for (const e of claimed) {
    const step = run.steps.get(e.sequence_id)?.[e.step_index];
    const contact = contacts.get(e.contact_id);
    if (!step) decided.push(keep(e, now, { status: 'completed', next_send_at: null }));
    else if (!contact || isSuppressedStatus(contact.status)) {
      decided.push(keep(e, now, { status: 'cancelled', next_send_at: null }));
      result.cancelled++;
      // a status written without the suppression flow (an import, contacts.upsert) cancelled nothing: a deferred step would wait for ever
      if (contact) await ctx.store.sends.cancelWaiting({ contactId: contact.id }, now);
    } else candidates.push({ enrollment: e, step, contact, message: () => prepare(run, step) });
  }

  const tokens = newTokens(candidates.length);
  const created = await ctx.store.sends.claimSteps(
    candidates.map(({ enrollment: e, step, contact }, i) => ({
      token: tokens[i],
      contact_id: contact.id,
      enrollment_id: e.id,
      step_id: step.id,
      step_index: e.step_index,
      to_email: contact.email,
      subject: step.subject,
      status: 'queued' as const,
    })),
    now,
  );
  // one step per enrollment in a chunk: the rows this insert created, by enrollment
  const mine = new Map(created.map((s) => [s.enrollment_id!, s]));
  const jobs: StepJob[] = [];
  const taken = candidates.filter((c) => !mine.has(c.enrollment.id));
  const existing = await ctx.store.sends.forSteps(taken.map((c) => ({ enrollment_id: c.enrollment.id, step_index: c.enrollment.step_index })));
  for (const c of candidates) {
    const own = mine.get(c.enrollment.id);
    const next = own ? { ...c, send: own } : await resume(run, c, existing.get(stepKey(c.enrollment.id, c.enrollment.step_index)), now);
    if ('settlement' in next) decided.push(next);
    else jobs.push(next);
  }
  await writeDecisions(run, decided, []);
  return jobs;
}

/**
 * Steps whose start found the claim gone: taken back by another run (which sends the `queued` row
 * then) or cancelled because the contact was suppressed meanwhile. A cancelled one's row would
 * wait for ever: it is cancelled too.
 */
async function leftUnstarted(run: DripRun, jobs: StepJob[]): Promise<void> {
  const { ctx } = run;
  for (const contactId of new Set(jobs.map((j) => j.contact.id))) {
    const mine = jobs.filter((j) => j.contact.id === contactId);
    const states = await Promise.all(mine.map((j) => ctx.store.enrollments.getById(j.enrollment.id)));
    if (states.some((e) => e?.status === 'cancelled')) await ctx.store.sends.cancelWaiting({ contactId }, ctx.clock.now());
  }
}

function prepare(run: DripRun, step: Step): Promise<PreparedMessage> {
  let p = run.prepared.get(step.id);
  if (!p) {
    p = run.ctx.dispatcher.prepare(`s${step.id}`, specOf(step, run.ctx.config));
    run.prepared.set(step.id, p);
  }
  return p;
}

function specOf(step: Step, config: Pick<Config, 'listIdDomain' | 'feedbackId'>) {
  return {
    headers: listHeaders(config, { kind: 'drip', id: step.sequence_id }),
    subject: step.subject,
    html: step.html,
    markdown: step.markdown,
    markdownFile: step.markdown_file,
    text: step.text,
    layout: step.layout,
    data: { step: { position: step.position + 1, sequence_id: step.sequence_id } },
  };
}
