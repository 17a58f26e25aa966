import type { Kysely } from 'kysely';
import type { EnrollmentsRepo } from '../../core/storage/enrollments.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { refuseDuplicate } from '../unique.ts';
import { enrollmentClaims } from './enrollments/claims.ts';
import { toEnrollment } from './enrollments/rows.ts';
import { enrollmentSettlement } from './enrollments/settle.ts';
import { createStepGroupWriter, createStepStarter } from './step-groups.ts';

/** The enrollments repository: enrolling, reads and cancelling here, the worker's claims in enrollments/. */
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
    ...enrollmentClaims(db, dialect),
    ...enrollmentSettlement(db),
  };
}
