import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { NotifyError } from '../../errors.ts';
import type { ColumnTypes, StoreDialect } from '../dialect.ts';
import * as initial from './001_initial.ts';
import * as sending from './002_sending.ts';
import * as eventClickWindow from './003_event_click_window.ts';
import * as eventsClickIndex from './004_events_click_index.ts';
import * as tracking from './005_tracking.ts';
import * as capture from './006_capture.ts';
import * as sendSuppressedRecipients from './007_send_suppressed_recipients.ts';
import * as listMembership from './008_list_membership.ts';
import * as campaignLifecycle from './009_campaign_lifecycle.ts';
import * as trackingBatches from './016_tracking_batches.ts';
import { MIGRATION_TABLE, upgradeLegacyNames } from './legacy-names.ts';

/** What a migration needs to know to write one definition for both engines. */
export type MigrationContext = ColumnTypes;

export type MigrationModule = { up: (db: Kysely<any>, ctx: MigrationContext) => Promise<void> };

/**
 * In the order they run: add a new one at the end, numbered one above the last. Every name has a
 * number of its own because the migrator sorts pending names by code unit but applied ones (with
 * equal times) by locale, and the two disagree on names that differ only after the number.
 */
export const MIGRATIONS: Readonly<Record<string, MigrationModule>> = {
  '001_initial': initial,
  '002_sending': sending,
  '003_event_click_window': eventClickWindow,
  '004_events_click_index': eventsClickIndex,
  '005_tracking': tracking,
  '006_capture': capture,
  '007_send_suppressed_recipients': sendSuppressedRecipients,
  '008_list_membership': listMembership,
  '009_campaign_lifecycle': campaignLifecycle,
  '016_tracking_batches': trackingBatches,
};

export interface MigrateResult {
  applied: string[];
}

export async function migrateToLatest(dialect: StoreDialect): Promise<MigrateResult> {
  const upgraded = await upgradeLegacyNames(dialect, MIGRATIONS);
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, mod] of Object.entries(MIGRATIONS)) out[name] = { up: (d) => mod.up(d, dialect.columns) };
      return out;
    },
  };
  const migrator = new Migrator({
    db: dialect.db,
    provider,
    migrationTableSchema: await dialect.migrationTableSchema(),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'notify_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  // the lock's own error (another process held it too long) says all there is to say
  if (error instanceof NotifyError) throw error;
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new NotifyError('STORE_UNAVAILABLE', `Migration${failed ? ` ${failed}` : 's'} failed: ${(error as Error).message}`, { migration: failed }, { cause: error });
  }
  return { applied: [...upgraded, ...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)] };
}
