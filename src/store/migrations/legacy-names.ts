import type { Kysely } from 'kysely';
import { NotifyError } from '../../errors.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';
import type { MigrationModule } from './index.ts';

export const MIGRATION_TABLE = 'notify_migrations';

/**
 * The names older releases recorded in notify_migrations, and the name each migration has now.
 * Three of them shared one number and one was numbered below migrations applied before it, so
 * their order rested on how `_` sorts against a letter. Frozen: never add to this list.
 */
export const LEGACY_NAMES: Readonly<Record<string, string>> = {
  '001_initial': '001_initial',
  '003_sending': '002_sending',
  '004_event_click_window': '003_event_click_window',
  '004_events_click_index': '004_events_click_index',
  '004_tracking': '005_tracking',
  '007_capture': '006_capture',
  '008_send_suppressed_recipients': '007_send_suppressed_recipients',
};

interface MigrationRow {
  name: string;
  timestamp: string;
}

/**
 * Gives a database migrated by an older release the current names, before the migrator reads
 * them, so nothing it applied runs again. Only when every recorded name is an old one, in one
 * transaction that other starting instances wait for.
 *
 * Older releases applied a migration numbered below the newest applied one too, so such a
 * database may lack one below its newest (it runs here) and its recorded times may not follow the
 * new order; the migrator orders applied migrations by time and refuses any that are out of place,
 * so each time is raised to at least the one before it. Returns the migrations run here.
 */
export async function upgradeLegacyNames(dialect: StoreDialect, migrations: Readonly<Record<string, MigrationModule>>): Promise<string[]> {
  if (!(await hasMigrationTable(dialect.db))) return [];
  const hasLegacyName = (rows: MigrationRow[]) => rows.some((r) => Object.hasOwn(LEGACY_NAMES, r.name) && !Object.hasOwn(migrations, r.name));
  // Nearly every start finds the current names: it reads them without waiting for the lock that
  // another process migrating holds, and leaves the waiting to the migrator.
  if (!hasLegacyName(await readMigrationRows(dialect.db))) return [];
  return dialect.writeTransaction(dialect.db, async (trx) => {
    await dialect.lockTable(trx, MIGRATION_TABLE);
    const rows = await readMigrationRows(trx);
    if (!hasLegacyName(rows)) return [];
    const unknown = rows.filter((r) => !Object.hasOwn(LEGACY_NAMES, r.name)).map((r) => r.name);
    if (unknown.length > 0) {
      const message = `${MIGRATION_TABLE} lists migrations of an older release beside ${unknown.join(', ')}, a name this release does not know; nothing was renamed`;
      throw new NotifyError('STORE_UNAVAILABLE', message, { unknown });
    }
    const recorded = new Map(rows.map((r) => [LEGACY_NAMES[r.name], r.timestamp]));
    const names = Object.keys(migrations);
    const upTo = Math.max(...names.map((name, i) => (recorded.has(name) ? i : -1)));
    const ran: string[] = [];
    const renamed: MigrationRow[] = [];
    for (const name of names.slice(0, upTo + 1)) {
      let timestamp = recorded.get(name);
      if (timestamp === undefined) {
        await migrations[name].up(trx, { ...dialect.columns, kind: dialect.kind });
        ran.push(name);
        timestamp = new Date().toISOString();
      }
      const before = renamed.at(-1)?.timestamp;
      renamed.push({ name, timestamp: before !== undefined && Date.parse(before) > Date.parse(timestamp) ? before : timestamp });
    }
    const table = trx as unknown as Kysely<{ notify_migrations: MigrationRow }>;
    await table.deleteFrom(MIGRATION_TABLE).execute();
    await table.insertInto(MIGRATION_TABLE).values(renamed).execute();
    return ran;
  });
}

function readMigrationRows(db: Kysely<Database>): Promise<MigrationRow[]> {
  const table = db as unknown as Kysely<{ notify_migrations: MigrationRow }>;
  return table.selectFrom(MIGRATION_TABLE).select(['name', 'timestamp']).execute();
}

async function hasMigrationTable(db: Kysely<Database>): Promise<boolean> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  return tables.some((t) => t.name === MIGRATION_TABLE);
}
