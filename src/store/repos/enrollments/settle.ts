import { type Kysely, sql } from 'kysely';
import type { EnrollmentsRepo, Settlement } from '../../../core/storage/enrollments.ts';
import type { Database } from '../../schema.ts';

/** the end of a claim: each claimed enrollment's new state, in one statement per 500 */
export function enrollmentSettlement(db: Kysely<Database>): Pick<EnrollmentsRepo, 'settle'> {
  return {
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
