import type { Selectable } from 'kysely';
import type { Enrollment, EnrollmentStatus } from '../../../core/types.ts';
import { toDate } from '../../rows.ts';
import type { EnrollmentsTable } from '../../schema.ts';

type Row = Selectable<EnrollmentsTable>;

export function toEnrollment(r: Row): Enrollment {
  return {
    id: Number(r.id),
    sequence_id: Number(r.sequence_id),
    contact_id: Number(r.contact_id),
    status: r.status as EnrollmentStatus,
    step_index: Number(r.step_index),
    next_send_at: toDate(r.next_send_at),
    attempts: Number(r.attempts),
    last_error: r.last_error,
  };
}
