import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { NotifyError } from '../../errors.ts';
import type { ColumnTypes, StoreDialect } from '../dialect.ts';
import * as m001 from './001_initial.ts';
import * as m004 from './004_tracking.ts';
import * as m004b from './004_event_click_window.ts';
import * as m004c from './004_events_click_index.ts';
import * as m007 from './007_capture.ts';
import * as m008 from './008_send_suppressed_recipients.ts';
import * as m003 from './003_sending.ts';

/** What a migration needs to know to write one definition for both engines. */
export type MigrationContext = ColumnTypes;

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

export interface MigrateResult {
  applied: string[];
}

export async function migrateToLatest(dialect: StoreDialect): Promise<MigrateResult> {
  const ctx = dialect.columns;
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, mod] of Object.entries(MIGRATIONS)) out[name] = { up: (d) => mod.up(d, ctx) };
      return out;
    },
  };
  const migrator = new Migrator({
    db: dialect.db,
    provider,
    migrationTableSchema: await dialect.migrationTableSchema(),
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
