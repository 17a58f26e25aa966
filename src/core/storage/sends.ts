import type { SendRecord, SendStatus, SuppressedRecipient } from '../types.ts';

export interface NewSend {
  token: string;
  campaign_id?: number | null;
  contact_id?: number | null;
  enrollment_id?: number | null;
  step_id?: number | null;
  step_index?: number | null;
  to_email: string;
  subject: string;
  status: SendStatus;
  error?: string | null;
  suppressed_recipients?: SuppressedRecipient[];
}

/** The outcome of one delivery attempt, written back in groups. */
export interface SendOutcome {
  id: number;
  status: 'sent' | 'failed' | 'suppressed' | 'deferred';
  error?: string | null;
  message_id?: string | null;
  /**
   * failed only: the failure may pass if tried again later (SMTP 4xx, a lost connection, provider
   * throttling); false for one that will not (SMTP 5xx, a refused message, a render error)
   */
  transient?: boolean;
  /** failed only: the mail server or provider answered that it never will (SMTP 5xx): not tried again */
  final?: boolean;
  /** deferred only: when to try again (epoch ms) */
  next_attempt_at?: number;
}

/** A drip step's send row with what a later run needs to decide about it. */
export interface StepSend extends SendRecord {
  step_index: number;
  updated_at: number;
}

/** The key of a drip step's row in SendsRepo.forSteps. */
export const stepKey = (enrollmentId: number, stepIndex: number) => `${enrollmentId}:${stepIndex}`;

export interface SendsRepo {
  create(row: NewSend, now: number): Promise<SendRecord>;
  /**
   * One multi-row INSERT of campaign rows; a (campaign, contact) pair that already has a row is
   * skipped. Returns only the rows this call created: they are the caller's to send, and no other
   * run can have them (the unique constraint decides, on both engines).
   */
  claim(rows: NewSend[], now: number): Promise<SendRecord[]>;
  /**
   * Drip step rows (enrollment_id, step_index set), one multi-row INSERT; a step that already has a
   * row is skipped. Returns only the rows this call created (`queued`, no attempt yet: a step
   * counts an attempt as it starts, EnrollmentsRepo.startSteps).
   */
  claimSteps(rows: NewSend[], now: number): Promise<SendRecord[]>;
  /** the rows of these enrollments' steps, by stepKey */
  forSteps(steps: { enrollment_id: number; step_index: number }[]): Promise<Map<string, StepSend>>;
  /** a `deferred` (or `failed`, not `interrupted`) step row back to `queued` for a retry (its start counts the attempt); false when another run took it */
  retake(id: number, now: number): Promise<boolean>;
  /** a row still `sending` that was last touched before `olderThan` becomes failed/interrupted; true when this call did it */
  interrupt(id: number, olderThan: number, now: number): Promise<boolean>;
  /** writes outcomes for rows still `sending` (a row reclaimed as interrupted keeps that); returns rows changed */
  finish(outcomes: SendOutcome[], now: number): Promise<number>;
  /**
   * A campaign's sends waiting for a run: `deferred` ones whose next attempt is due, and `queued`
   * ones not touched since `staleBefore` (claimed by a run that died before handing them to the
   * mailer: safe to send). Up to `limit`, made `queued` by this run (compare-and-set: of two runs,
   * one gets each row).
   */
  takeWaiting(campaignId: number, now: number, staleBefore: number, limit: number): Promise<SendRecord[]>;
  /** how many of a campaign's sends are `deferred` or `queued`, and the earliest next attempt */
  waiting(campaignId: number): Promise<{ count: number; nextAttemptAt?: number }>;
  /**
   * Sends that would otherwise wait for ever become `cancelled` (never tried again): a campaign's
   * `deferred` and `queued` ones, or the `deferred` and `queued` drip steps of a contact (its
   * enrollments were cancelled). Returns how many.
   */
  cancelWaiting(scope: { campaignId: number } | { contactId: number }, now: number): Promise<number>;
  /**
   * The contact's campaign sends waiting for another try (`deferred`) become `suppressed`: the
   * contact opted out or cannot be reached, so they are never tried again. Returns how many per campaign.
   */
  suppressWaiting(contactId: number, now: number): Promise<Map<number, number>>;
  /** the earliest `next_attempt_at` after `after` of a deferred send whose campaign is `sending` */
  nextAttempt(after: number): Promise<number | undefined>;
  /** rows left `sending` since before `olderThan` become failed with reason `interrupted` (the mailer may have taken them) */
  failStale(olderThan: number, now: number, campaignId?: number): Promise<{ id: number; campaign_id: number | null }[]>;
  getById(id: number): Promise<SendRecord | undefined>;
  getByToken(token: string): Promise<SendRecord | undefined>;
  getByMessageId(messageId: string): Promise<SendRecord | undefined>;
}
