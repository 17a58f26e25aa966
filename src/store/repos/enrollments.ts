import { type Kysely, type Selectable, sql } from 'kysely';
import type { EnrollmentsRepo, Settlement } from '../../core/storage/enrollments.ts';
import type { Enrollment, EnrollmentStatus } from '../../core/types.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Outbox } from '../outbox.ts';
import { earliest, toDate } from '../rows.ts';
import type { Database, EnrollmentsTable } from '../schema.ts';
import { refuseDuplicate } from '../unique.ts';
import { createStepGroupWriter, createStepStarter } from './send-groups.ts';

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

export function createEnrollmentsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): EnrollmentsRepo {
  return {
    writeStepGroup: createStepGroupWriter(db, dialect, outbox),
    startSteps: createStepStarter(db, dialect),
    async create(row, now) {
      const insert = () =>
        db
          .insertInto('notify_enrollments')
          .values({ ...row, status: 'active', step_index: 0, attempts: 0, created_at: now, updated_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      const { contact_id: contactId, sequence_id: sequenceId } = row;
      return toEnrollment(await refuseDuplicate(dialect, insert, `Contact ${contactId} is already enrolled in sequence ${sequenceId}`, { contactId, sequenceId }));
    },
    async getById(id) {
      const r = await db.selectFrom('notify_enrollments').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toEnrollment(r);
    },
    async page(sequenceId, filter, afterId, limit) {
      let q = db.selectFrom('notify_enrollments').selectAll().where('sequence_id', '=', sequenceId).where('id', '>', afterId);
      if (filter.status) q = q.where('status', '=', filter.status);
      return (await q.orderBy('id').limit(limit).execute()).map(toEnrollment);
    },
    async cancelForContact(contactId, now) {
      // A processing claim keeps its claim_token, so the worker's late completion matches nothing.
      const res = await db
        .updateTable('notify_enrollments')
        .set({ status: 'cancelled', updated_at: now, next_send_at: null })
        .where('contact_id', '=', contactId)
        .where('status', 'in', ['active', 'processing'])
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
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
    async settle(claimToken, settlements, now) {
      const changed = new Set<number>();
      for (let i = 0; i < settlements.length; i += 500) {
        const group = settlements.slice(i, i + 500);
        const caseOf = (type: 'text' | 'integer' | 'bigint', pick: (s: Settlement) => string | number | null) =>
          sql`case id ${sql.join(
            group.map((s) => sql`when ${s.id} then cast(${pick(s)} as ${sql.raw(type)})`),
            sql` `,
          )} end`;
        const rows = await db
          .updateTable('notify_enrollments')
          .set({
            status: caseOf('text', (s) => s.status) as never,
            step_index: caseOf('integer', (s) => s.step_index) as never,
            next_send_at: caseOf('bigint', (s) => s.next_send_at) as never,
            attempts: caseOf('integer', (s) => s.attempts) as never,
            last_error: caseOf('text', (s) => s.last_error) as never,
            claim_token: null,
            locked_at: null,
            updated_at: now,
          })
          .where(
            'id',
            'in',
            group.map((s) => s.id),
          )
          .where('status', '=', 'processing')
          .where('claim_token', '=', claimToken)
          .returning('id')
          .execute();
        for (const r of rows) changed.add(Number(r.id));
      }
      return changed;
    },
  };
}
