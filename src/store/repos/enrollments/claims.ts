import type { Kysely } from 'kysely';
import type { ClaimedEnrollment, EnrollmentsRepo } from '../../../core/storage/enrollments.ts';
import type { StoreDialect } from '../../dialect.ts';
import { earliest, toDate } from '../../rows.ts';
import type { Database } from '../../schema.ts';
import { fixedStatement, planEachRun } from '../../fixed-statement.ts';

/** the columns a claimed enrollment is read with (its status is `processing`, its token the run's) */
const CLAIMED = 'id, sequence_id, contact_id, step_index, next_send_at, attempts, last_error';
type ClaimedRow = Record<'id' | 'sequence_id' | 'contact_id' | 'step_index' | 'next_send_at' | 'attempts', number | string> & { last_error: string | null };

/** a claimed row as the run holds it (PostgreSQL gives bigints as strings) */
const claimed = (r: ClaimedRow, claimToken: string): ClaimedEnrollment => ({
  id: Number(r.id),
  sequence_id: Number(r.sequence_id),
  contact_id: Number(r.contact_id),
  status: 'processing',
  step_index: Number(r.step_index),
  next_send_at: toDate(r.next_send_at === null ? null : Number(r.next_send_at)),
  attempts: Number(r.attempts),
  last_error: r.last_error,
  claim_token: claimToken,
});

/**
 * Due `active` enrollments become `processing` under the run's claim token, the earliest first, at
 * most `limit`. One text that never changes (no query built per chunk). Contacts still `pending`
 * double opt-in wait.
 */
const DUE = `select e.id from notify_enrollments e where e.status = 'active' and e.next_send_at <= ?
  and not exists (select 1 from notify_contacts c where c.id = e.contact_id and c.status = 'pending')
  order by e.next_send_at limit ?`;
const SET_CLAIMED = "set status = 'processing', claim_token = ?, locked_at = ?, updated_at = ?";
/** SQLite: one writer at a time, so the due rows read are the rows updated; the subquery runs once */
const CLAIM_SQLITE = fixedStatement(`update notify_enrollments ${SET_CLAIMED} where id in (${DUE}) and status = 'active' returning ${CLAIMED}`);
/**
 * PostgreSQL: a CTE with a row lock is materialised once (never re-run per row), so LIMIT holds, and
 * SKIP LOCKED passes over rows another run is claiming at the same moment. Planned on every run: the
 * best plan for the due rows depends on how large the table is now (fixed-statement.ts).
 */
const CLAIM_POSTGRES = fixedStatement(
  planEachRun(`with due as (${DUE} for update skip locked) update notify_enrollments ${SET_CLAIMED} where id in (select id from due) and status = 'active' returning ${CLAIMED}`),
);

/** the worker's side: when the next step is due, claiming due enrollments, and taking back claims a dead worker left */
export function enrollmentClaims(db: Kysely<Database>, dialect: StoreDialect): Pick<EnrollmentsRepo, 'nextDue' | 'reclaimStale' | 'interruptStaleSteps' | 'claimDue'> {
  return {
    async nextDue(after) {
      const row = await db
        .selectFrom('notify_enrollments as e')
        .select((eb) => eb.fn.min('e.next_send_at').as('t'))
        .where('e.status', '=', 'active')
        .where('e.next_send_at', '>', after)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('notify_contacts as c').select('c.id').whereRef('c.id', '=', 'e.contact_id').where('c.status', '=', 'pending'))))
        .executeTakeFirst();
      return earliest(row);
    },
    async reclaimStale(olderThan, now) {
      const res = await db
        .updateTable('notify_enrollments')
        .set({ status: 'active', claim_token: null, locked_at: null, updated_at: now })
        .where('status', '=', 'processing')
        .where('locked_at', '<', olderThan)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
    async interruptStaleSteps(olderThan, now) {
      const rows = await db
        .updateTable('notify_sends')
        .set({ status: 'failed', error: 'interrupted', updated_at: now })
        .where('status', '=', 'sending')
        .where('enrollment_id', 'is not', null)
        .where('updated_at', '<', olderThan)
        .returning(['id', 'enrollment_id', 'step_index'])
        .execute();
      return rows.map((r) => ({ id: Number(r.id), enrollment_id: Number(r.enrollment_id), step_index: Number(r.step_index) }));
    },
    async claimDue(now, limit, claimToken) {
      const { rows } = dialect.kind === 'postgres' ? await CLAIM_POSTGRES<ClaimedRow>(db, [now, limit, claimToken, now, now]) : await CLAIM_SQLITE<ClaimedRow>(db, [claimToken, now, now, now, limit]);
      return rows.map((r) => claimed(r, claimToken)).sort((a, b) => a.id - b.id);
    },
  };
}
