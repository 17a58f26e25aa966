import type { Selectable } from 'kysely';
import type { NewSend, SendOutcome } from '../../core/storage/sends.ts';
import type { SendRecord, SendStatus, SuppressedRecipient } from '../../core/types.ts';
import { toDate } from '../rows.ts';
import type { SendsTable } from '../schema.ts';

export type SendRow = Selectable<SendsTable>;

export function toSendRecord(row: SendRow): SendRecord {
  return {
    id: Number(row.id),
    token: row.token,
    status: row.status as SendStatus,
    campaign_id: row.campaign_id === null ? null : Number(row.campaign_id),
    contact_id: row.contact_id === null ? null : Number(row.contact_id),
    enrollment_id: row.enrollment_id === null ? null : Number(row.enrollment_id),
    to_email: row.to_email,
    subject: row.subject,
    error: row.error,
    message_id: row.message_id,
    created_at: toDate(row.created_at)!,
    sent_at: toDate(row.sent_at),
    opened_at: toDate(row.opened_at),
    clicked_at: toDate(row.clicked_at),
    suppressed_recipients: listOf(row.suppressed_recipients) as SuppressedRecipient[],
    attempts: Number(row.attempts ?? 0),
    next_attempt_at: toDate(row.next_attempt_at),
  };
}

/** the record of a row just inserted from `r` (what its RETURNING * would read back) */
export function claimedRecord(id: number, r: NewSend, now: number, attempts: number): SendRecord {
  const at = toDate(now)!;
  return {
    id,
    token: r.token,
    status: r.status,
    campaign_id: r.campaign_id ?? null,
    contact_id: r.contact_id ?? null,
    enrollment_id: r.enrollment_id ?? null,
    to_email: r.to_email,
    subject: r.subject,
    error: r.error ?? null,
    message_id: null,
    created_at: at,
    sent_at: null,
    opened_at: null,
    clicked_at: null,
    suppressed_recipients: r.suppressed_recipients?.length ? [...r.suppressed_recipients] : [],
    attempts,
    next_attempt_at: null,
  };
}

/** A JSON list column: text on SQLite, already parsed jsonb on PostgreSQL. */
function listOf(value: unknown): unknown[] {
  const parsed = typeof value === 'string' && value !== '' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? parsed : [];
}

/** the columns a new send row is written with */
export const values = (r: NewSend, now: number) => ({
  token: r.token,
  campaign_id: r.campaign_id ?? null,
  contact_id: r.contact_id ?? null,
  enrollment_id: r.enrollment_id ?? null,
  step_id: r.step_id ?? null,
  step_index: r.step_index ?? null,
  to_email: r.to_email,
  subject: r.subject,
  status: r.status,
  error: r.error ?? null,
  suppressed_recipients: r.suppressed_recipients?.length ? JSON.stringify(r.suppressed_recipients) : null,
  created_at: now,
  updated_at: now,
});

/** what an outcome writes on its send row */
export const outcomeRow = (o: SendOutcome, now: number) => ({
  id: o.id,
  status: o.status,
  error: o.error ?? null,
  message_id: o.message_id ?? null,
  sent_at: o.status === 'sent' ? now : null,
  next_attempt_at: o.status === 'deferred' ? (o.next_attempt_at ?? now) : null,
  updated_at: now,
});
