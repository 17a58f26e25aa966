import type { Enrollment, EnrollmentStatus } from '../types.ts';
import type { SendOutcome } from './sends.ts';

/** An enrollment this run claimed: its claim token is the proof, checked by settle(). */
export interface ClaimedEnrollment extends Enrollment {
  claim_token: string;
}

/** Where a claimed enrollment goes when its run is done with it. */
export interface Settlement {
  id: number;
  status: Exclude<EnrollmentStatus, 'processing'>;
  step_index: number;
  next_send_at: number | null;
  attempts: number;
  last_error: string | null;
}

export interface EnrollmentsRepo {
  /** a new `active` enrollment; a second one for the same sequence and contact is DUPLICATE */
  create(row: { sequence_id: number; contact_id: number; next_send_at: number }, now: number): Promise<Enrollment>;
  getById(id: number): Promise<Enrollment | undefined>;
  /** the sequence's enrollments with an id above `afterId`, in id order, optionally of one status */
  page(sequenceId: number, filter: { status?: EnrollmentStatus }, afterId: number, limit: number): Promise<Enrollment[]>;
  /** active and processing enrollments of the contact become cancelled; returns how many */
  cancelForContact(contactId: number, now: number): Promise<number>;
  /** the earliest `next_send_at` after `after` of an `active` enrollment a run would claim then (its contact not `pending`) */
  nextDue(after: number): Promise<number | undefined>;
  /** `processing` enrollments claimed before `olderThan` (a crashed or killed run) go back to `active` */
  reclaimStale(olderThan: number, now: number): Promise<number>;
  /**
   * Drip step rows left `sending` since before `olderThan` (a crashed or killed run had them in
   * flight) become failed with reason `interrupted`: the mail server may have taken them, so they
   * are never resent. Returns them.
   */
  interruptStaleSteps(olderThan: number, now: number): Promise<{ id: number; enrollment_id: number; step_index: number }[]>;
  /**
   * Up to `limit` due `active` enrollments become `processing` under `claimToken`, atomically: a row
   * another run is claiming at the same moment is skipped, never claimed twice.
   * Contacts still `pending` double opt-in wait (their steps stay due until they confirm).
   */
  claimDue(now: number, limit: number, claimToken: string): Promise<ClaimedEnrollment[]>;
  /**
   * Applies settlements, each only while the enrollment is still `processing` under `claimToken`:
   * a run whose claim was reclaimed (or cancelled) meanwhile changes nothing. Returns the ids changed.
   */
  settle(claimToken: string, settlements: Settlement[], now: number): Promise<Set<number>>;
  /**
   * A drip run's group commit: step outcomes (on rows still `sending`) and the settlements of their
   * enrollments (each while still `processing` under its claim token) in one transaction of its
   * own, as fixed statements whatever the group's size (not for use inside Store.transaction).
   * Returns the steps started and the enrollment ids settled.
   */
  writeStepGroup(group: StepGroup, now: number): Promise<StepGroupResult>;
  /**
   * Step rows handed to the mailer become `sending` (one more attempt counted): each only while it
   * is `queued` and its enrollment still `processing` under the given claim. Returns the send ids
   * started; a step left out is not this run's to send (its claim was taken back or cancelled).
   */
  startSteps(start: StepStart[], now: number): Promise<Set<number>>;
}

/** A step's send row to start, with the claim its enrollment is held under. */
export interface StepStart {
  id: number;
  claim_token: string;
}

/** A settlement with the claim it applies under. */
export interface ClaimedSettlement extends Settlement {
  claim_token: string;
}

/** What one group commit of a drip run writes (EnrollmentsRepo.writeStepGroup). */
export interface StepGroup {
  /** step rows the pool is about to hand to the mailer (EnrollmentsRepo.startSteps) */
  start?: StepStart[];
  outcomes: SendOutcome[];
  settlements: ClaimedSettlement[];
}

/** What a drip group commit changed: send ids started, enrollment ids settled. */
export interface StepGroupResult {
  started: Set<number>;
  settled: Set<number>;
}
