import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';
import type { MigrationContext } from './index.ts';

/** notify_meta key of the backfill still to do: `{ after, upTo }`, event ids; gone once done */
export const BACKFILL_KEY = 'backfill:019_events_contact_from_send';

/** events per backfill transaction */
const BATCH = 10_000;

/**
 * Every event of a send names the send's person (contact_id), so a person's events are found by
 * notify_events_contact alone (repos/person-data.ts) and notify_events needs no index by send. The
 * writers fill it since this release; the events stored before it that name only their send are
 * given the send's person by `afterCommit`, in batches of their own: the migrator runs every
 * pending migration in one transaction (PostgreSQL) or under the write lock (SQLite), which a
 * million-row UPDATE would hold for its whole length. Here only the work is recorded.
 */
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  // Erasure also finds the one-off sends that left the person out (suppressed_recipients names
  // them by id): without this it read every send (~20 ms at 100,000 sends, in the erasure's
  // transaction). Partial: a send that left no one out (every campaign and drip send) adds no entry.
  await db.schema.createIndex('notify_sends_suppressed').on('notify_sends').column('id').where(sql.ref('suppressed_recipients'), 'is not', null).execute();
  const last = await db.selectFrom('notify_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  const upTo = Number(last?.id ?? 0);
  if (upTo > 0) await db.insertInto('notify_meta').values({ key: BACKFILL_KEY, value: JSON.stringify({ after: 0, upTo }) }).execute();
}

/**
 * The recorded backfill, one batch per write transaction, until none is left; run after every
 * migrate, so one interrupted (a crash, a restart) goes on where it stopped. Processes running it
 * together take turns on the cursor row.
 */
export async function afterCommit(dialect: StoreDialect, batch = BATCH): Promise<void> {
  while (!(await backfillBatch(dialect, batch)));
}

/** One batch: the events with ids in (after, after + batch]; true once nothing is left. */
export async function backfillBatch(dialect: StoreDialect, batch = BATCH): Promise<boolean> {
  return dialect.writeTransaction(dialect.db, async (trx) => {
    const row = await dialect.lockForUpdate(trx.selectFrom('notify_meta').select('value').where('key', '=', BACKFILL_KEY)).executeTakeFirst();
    if (!row) return true;
    const { after, upTo } = JSON.parse(row.value) as { after: number; upTo: number };
    const end = Math.min(after + batch, upTo);
    await fillFromSends(trx, dialect, after, end);
    if (end >= upTo) await trx.deleteFrom('notify_meta').where('key', '=', BACKFILL_KEY).execute();
    else await trx.updateTable('notify_meta').set({ value: JSON.stringify({ after: end, upTo }) }).where('key', '=', BACKFILL_KEY).execute();
    return end >= upTo;
  });
}

/**
 * An erased person's sends no longer name them (contact_id null), so their events stay
 * anonymous; an event of a send without a person stays without one. The sends are locked first
 * (in id order, as every writer locks them): an erasure in progress has them locked, and this
 * then reads them as it left them, instead of giving its anonymised events the person again.
 */
async function fillFromSends(trx: Kysely<Database>, dialect: StoreDialect, after: number, end: number): Promise<void> {
  const pending = (eb: ExpressionBuilder<Database, 'notify_events'>) => eb.and([eb('id', '>', after), eb('id', '<=', end), eb('contact_id', 'is', null), eb('send_id', 'is not', null)]);
  const sends = trx.selectFrom('notify_sends').select('id').where('id', 'in', trx.selectFrom('notify_events').select('send_id').where(pending)).where('contact_id', 'is not', null).orderBy('id');
  if ((await dialect.lockForUpdate(sends).execute()).length === 0) return;
  await sql`
    update notify_events set contact_id = s.contact_id
    from notify_sends as s
    where notify_events.id > ${after} and notify_events.id <= ${end}
      and notify_events.contact_id is null and s.id = notify_events.send_id and s.contact_id is not null`.execute(trx);
}
