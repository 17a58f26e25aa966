import { CONTACT_STATUSES } from '../../core/types.ts';
import { arrayOf, bool, dateTime, freeObject, int, nullable, record, str } from './schemas.ts';

const at = nullable(dateTime);

/** The shape of notify.contacts.export() (core/person-data.ts). */
export const PERSON_DATA = record({
  contact: record({ id: int, email: str, name: nullable(str), status: { type: 'string', enum: [...CONTACT_STATUSES] }, attributes: freeObject, created_at: dateTime, updated_at: dateTime }),
  optin: record({ consent_at: at, consent_source: nullable(str), consent_ip: nullable(str), confirmation_sent_at: at }),
  lists: arrayOf(record({ name: str, status: str, joined_at: at }, ['status'])),
  sends: arrayOf(
    record({
      id: int,
      campaign_id: nullable(int),
      enrollment_id: nullable(int),
      to_email: str,
      subject: str,
      status: str,
      error: nullable(str),
      created_at: at,
      sent_at: at,
      opened_at: at,
      clicked_at: at,
    }),
  ),
  events: arrayOf(record({ type: str, send_id: nullable(int), campaign_id: nullable(int), created_at: at, metadata: freeObject, is_machine: bool, machine_reason: nullable(str) })),
  enrollments: arrayOf(record({ id: int, sequence: str, status: str, step_index: int, next_send_at: at, created_at: at, updated_at: at })),
  status_changes: arrayOf(record({ list: nullable(str), from: nullable(str), to: str, at })),
});
