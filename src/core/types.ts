import type { Segment } from './segments.ts';

/** Public record shapes. Field names follow the spec (snake_case), timestamps are Date. */

export const CONTACT_STATUSES = ['subscribed', 'pending', 'transactional', 'unsubscribed', 'bounced', 'complained'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
/**
 * Contacts that never opted in to marketing: `pending` (double opt-in not confirmed yet) and
 * `transactional` (created by notify.send() for an unknown address). No campaign audience holds
 * them; one-off mail still reaches them.
 */
export const NOT_OPTED_IN_STATUSES: readonly ContactStatus[] = ['pending', 'transactional'];
/** Statuses that make a contact suppressed. */
export const SUPPRESSED_STATUSES: readonly ContactStatus[] = ['unsubscribed', 'bounced', 'complained'];

export function isSuppressedStatus(status: string): boolean {
  return (SUPPRESSED_STATUSES as readonly string[]).includes(status);
}

export interface Contact {
  id: number;
  email: string;
  name: string | null;
  status: ContactStatus;
  unsubscribe_token: string;
  attributes: Record<string, unknown>;
  lists: string[];
  consent_at: Date | null;
  consent_source: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The contact fields delivery needs (what an audience read and a drip run load); a Contact fits. */
export interface RecipientContact extends Pick<Contact, 'id' | 'email' | 'name' | 'unsubscribe_token' | 'attributes'> {
  status: string;
}

export interface ContactInput {
  email: string;
  name?: string | null;
  lists?: string[];
  attributes?: Record<string, unknown>;
  /** Only an explicit API call may set a status; a capture post never lifts a suppression. */
  status?: ContactStatus;
}

/** `cancelled`: a send that was waiting (deferred, queued) when its campaign or enrollment was cancelled; never tried again */
export const SEND_STATUSES = ['queued', 'sending', 'deferred', 'sent', 'failed', 'suppressed', 'cancelled'] as const;
export type SendStatus = (typeof SEND_STATUSES)[number];

export interface SendRecord {
  id: number;
  token: string;
  status: SendStatus;
  campaign_id: number | null;
  contact_id: number | null;
  enrollment_id: number | null;
  to_email: string;
  subject: string;
  error: string | null;
  message_id: string | null;
  created_at: Date;
  sent_at: Date | null;
  opened_at: Date | null;
  clicked_at: Date | null;
  /** notify.send(): the recipients left out because their contact is suppressed; empty when none */
  suppressed_recipients: SuppressedRecipient[];
  /** times the message was handed to the mailer */
  attempts: number;
  /** `deferred`: when it is tried again */
  next_attempt_at: Date | null;
}

/** A recipient of a one-off message that was not sent to: which field it was in, its contact and why. */
export interface SuppressedRecipient {
  field: 'to' | 'cc' | 'bcc';
  contact_id: number;
  status: ContactStatus;
}

export const ENROLLMENT_STATUSES = ['active', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export interface Enrollment {
  id: number;
  sequence_id: number;
  contact_id: number;
  status: EnrollmentStatus;
  step_index: number;
  next_send_at: Date | null;
  attempts: number;
  last_error: string | null;
}

export interface CampaignStats {
  total: number;
  sent: number;
  failed: number;
  opened: number;
  clicked: number;
}

/** What a campaign and a drip step both hold: the message before it is rendered. */
export interface MessageContent {
  subject: string;
  html: string | null;
  markdown: string | null;
  markdown_file: string | null;
  text: string | null;
  /** layout view name; null = defaultLayout; false = none */
  layout: string | false | null;
}

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'cancelled', 'sent'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export interface Campaign extends MessageContent {
  id: number;
  name: string | null;
  /** list name; null = every contact */
  list: string | null;
  /** segment filter narrowing the audience (see core/segments.ts); null = none */
  segment: Segment | null;
  from_name: string | null;
  from_email: string | null;
  data: Record<string, unknown>;
  headers: Record<string, string>;
  status: CampaignStatus;
  created_at: Date;
  sent_at: Date | null;
  /** when a scheduled campaign starts (kept once it has) */
  send_at: Date | null;
  /** why notify paused it on its own (auto-pause, an empty audience); null otherwise */
  status_reason: string | null;
  /** the open pixel; null = the trackOpens option */
  track_opens: boolean | null;
  /** links through /notify/click; null = the trackClicks option */
  track_clicks: boolean | null;
}

/** Result of one notify:send-campaign run. */
export interface CampaignRunResult {
  campaignId: number;
  sent: number;
  failed: number;
  suppressed: number;
  /** rows a crashed run left in `sending` that this run marked failed (reason `interrupted`) */
  interrupted: number;
  /** audience members still without a send row after this run */
  remaining: number;
  /** sends of this run that failed for a reason that may pass (SMTP 4xx, a lost connection, throttling): retried later */
  deferred: number;
  /** sends of the campaign not yet final after this run (deferred, or claimed by a run that has not finished); the campaign is not sent while any remain */
  waiting: number;
  /** the earliest time a deferred send of the campaign is tried again */
  nextAttemptAt?: Date;
  /** true when this run found nothing left and marked the campaign sent */
  done: boolean;
  /** the campaign's status after the run */
  status: CampaignStatus;
  /** why this run sent nothing more (paused, cancelled, scheduled for later, auto-paused, a dry run) */
  note?: string;
  /** testMode: the messages this run would have sent (logged, nothing delivered or recorded) */
  dryRun?: number;
}

export interface Step extends MessageContent {
  id: number;
  sequence_id: number;
  /** 0-based order in the sequence */
  position: number;
  /** minutes after the previous step was sent (the first step: after enrollment) */
  delay_minutes: number;
}

export interface Sequence {
  id: number;
  name: string;
  created_at: Date;
  steps: Step[];
  /** what enrols contacts by itself; null: only drips.enroll() does */
  trigger: { listJoined: string } | null;
}

/** Result of one notify:process-drips run. */
export interface DripRunResult {
  /** steps delivered */
  sent: number;
  /** enrollments marked failed after maxRetries attempts (notify_enrollment_failed fired for each) */
  failed: number;
  /** failed attempts scheduled again after retryDelayMinutes */
  retried: number;
  /** enrollments a crashed or killed run left `processing` past staleLockMinutes, returned to `active` */
  reclaimed: number;
}
