import { type Kysely, type Selectable, sql } from 'kysely';
import type { Enrollment, EnrollmentStatus } from '../../core/types.ts';
import type { StoreDialect } from '../dialect.ts';
import { toDate } from '../rows.ts';
import type { Database, EnrollmentsTable } from '../schema.ts';

/** An enrollment this run claimed: its claim token is the proof, checked by settle(). */
export interface ClaimedEnrollment extends Enrollment {
  claim_token: string;
}

/** Where a claimed enrollment goes when its run is done with it. */
export interface Settlement {
  id: number;
  status: Exclude<EnrollmentStatus, 'processing'>;
  step_index: number;
  next_send_at: number | null;
  attempts: number;
  last_error: string | null;
}

export interface EnrollmentsRepo {
  /** a new `active` enrollment; a second one for the same sequence and contact is a unique violation */
  create(row: { sequence_id: number; contact_id: number; next_send_at: number }, now: number): Promise<Enrollment>;
  getById(id: number): Promise<Enrollment | undefined>;
  /** active and processing enrollments of the contact become cancelled; returns how many */
  cancelForContact(contactId: number, now: number): Promise<number>;
  /** `processing` enrollments claimed before `olderThan` (a crashed or killed run) go back to `active` */
  reclaimStale(olderThan: number, now: number): Promise<number>;
  /**
   * Up to `limit` due `active` enrollments become `processing` under `claimToken`, atomically:
   * PostgreSQL skips rows another run is claiming (FOR UPDATE SKIP LOCKED), SQLite has one writer.
   * Contacts still `pending` double opt-in wait (their steps stay due until they confirm).
   */
  claimDue(now: number, limit: number, claimToken: string): Promise<ClaimedEnrollment[]>;
  /**
   * Applies settlements, each only while the enrollment is still `processing` under `claimToken`:
   * a run whose claim was reclaimed (or cancelled) meanwhile changes nothing. Returns the ids changed.
   */
  settle(claimToken: string, settlements: Settlement[], now: number): Promise<Set<number>>;
}

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

export function createEnrollmentsRepo(db: Kysely<Database>, dialect: StoreDialect): EnrollmentsRepo {
  return {
    async create(row, now) {
      const r = await db
        .insertInto('notify_enrollments')
        .values({ ...row, status: 'active', step_index: 0, attempts: 0, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toEnrollment(r);
    },
    async getById(id) {
      const r = await db.selectFrom('notify_enrollments').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toEnrollment(r);
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
    async reclaimStale(olderThan, now) {
      const res = await db
        .updateTable('notify_enrollments')
        .set({ status: 'active', claim_token: null, locked_at: null, updated_at: now })
        .where('status', '=', 'processing')
        .where('locked_at', '<', olderThan)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
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
