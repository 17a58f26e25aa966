import { type ColumnDataType, type ColumnDefinitionBuilder, type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import { NotifyError } from '../../errors.ts';
import type { DialectKind } from '../dialect.ts';
import * as m001 from './001_initial.ts';
import * as m004 from './004_tracking.ts';
import * as m004b from './004_event_click_window.ts';
import * as m004c from './004_events_click_index.ts';
import * as m007 from './007_capture.ts';
import * as m008 from './008_send_suppressed_recipients.ts';
import * as m003 from './003_sending.ts';

/** What a migration needs to know to write one definition for both engines. */
export interface MigrationContext {
  kind: DialectKind;
  /** type of a primary key id column */
  id: ColumnDataType;
  /** modifier that makes the id column an auto-incrementing primary key */
  pk: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** type of a column referencing an id */
  ref: ColumnDataType;
  /** epoch milliseconds */
  ts: ColumnDataType;
  json: ColumnDataType;
  bool: ColumnDataType;
}

type MigrationModule = { up: (db: Kysely<any>, ctx: MigrationContext) => Promise<void> };

/** Ordered list; add new files here. Names sort, so keep the numeric prefix. */
const MIGRATIONS: Record<string, MigrationModule> = {
  '001_initial': m001,
  '004_tracking': m004,
  '004_event_click_window': m004b,
  '004_events_click_index': m004c,
  '007_capture': m007,
  '003_sending': m003,
  '008_send_suppressed_recipients': m008,
};

export function migrationContext(kind: DialectKind): MigrationContext {
  return kind === 'postgres'
    ? { kind, id: 'bigserial', pk: (c) => c.primaryKey(), ref: 'bigint', ts: 'bigint', json: 'jsonb', bool: 'smallint' }
    : { kind, id: 'integer', pk: (c) => c.primaryKey().autoIncrement(), ref: 'integer', ts: 'integer', json: 'text', bool: 'integer' };
}

export interface MigrateResult {
  applied: string[];
}

export async function migrateToLatest(db: Kysely<any>, kind: DialectKind): Promise<MigrateResult> {
  const ctx = migrationContext(kind);
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, mod] of Object.entries(MIGRATIONS)) out[name] = { up: (d) => mod.up(d, ctx) };
      return out;
    },
  };
  const migrator = new Migrator({
    db,
    provider,
    // Without a schema Kysely finds its tables in ANY schema: a second notify in another schema
    // of the same database would see the first one's tables, skip creating its own, and fail.
    migrationTableSchema: kind === 'postgres' ? await currentSchema(db) : undefined,
    migrationTableName: 'notify_migrations',
    migrationLockTableName: 'notify_migrations_lock',
    // Features land independently; a migration numbered below one already applied still runs.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new NotifyError('STORE_UNAVAILABLE', `Migration ${failed ?? ''} failed: ${(error as Error).message}`, { migration: failed }, { cause: error });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

/** The schema unqualified names resolve to (the `?schema=` of the URL, else the search_path's first). */
async function currentSchema(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ name: string | null }>`select current_schema() as name`.execute(db);
  return rows[0]?.name ?? 'public';
}
