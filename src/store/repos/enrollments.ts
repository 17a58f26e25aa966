import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

export interface EnrollmentsRepo {
  /** active and processing enrollments of the contact become cancelled; returns how many */
  cancelForContact(contactId: number, now: number): Promise<number>;
}

export function createEnrollmentsRepo(db: Kysely<Database>): EnrollmentsRepo {
  return {
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
  };
}
