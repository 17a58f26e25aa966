import type { Kysely } from 'kysely';
import type { EnrollmentsRepo } from '../../../core/storage/enrollments.ts';
import type { StoreDialect } from '../../dialect.ts';
import { earliest } from '../../rows.ts';
import type { Database } from '../../schema.ts';
import { toEnrollment } from './rows.ts';

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
      const due = db
        .selectFrom('notify_enrollments as e')
        .select('e.id')
        .where('e.status', '=', 'active')
        .where('e.next_send_at', '<=', now)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('notify_contacts as c').select('c.id').whereRef('c.id', '=', 'e.contact_id').where('c.status', '=', 'pending'))),
        )
        .orderBy('e.next_send_at')
        .limit(limit);
      const rows = await db
        // A CTE with a row lock is materialised once (never re-run per row), so LIMIT holds.
        .with('due', () => dialect.lockForClaim(due))
        .updateTable('notify_enrollments')
        .set({ status: 'processing', claim_token: claimToken, locked_at: now, updated_at: now })
        .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
        .where('status', '=', 'active')
        .returningAll()
        .execute();
      return rows.map((r) => ({ ...toEnrollment(r), claim_token: claimToken })).sort((a, b) => a.id - b.id);
    },
  };
}
