import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { NotifyError } from '../../errors.ts';
import type { ColumnTypes, DialectKind, StoreDialect } from '../dialect.ts';
import * as initial from './001_initial.ts';
import * as sending from './002_sending.ts';
import * as eventClickWindow from './003_event_click_window.ts';
import * as eventsClickIndex from './004_events_click_index.ts';
import * as tracking from './005_tracking.ts';
import * as capture from './006_capture.ts';
import * as sendSuppressedRecipients from './007_send_suppressed_recipients.ts';
import * as listMembership from './008_list_membership.ts';
import * as campaignLifecycle from './009_campaign_lifecycle.ts';
import * as sendDeferral from './010_send_deferral.ts';
import * as sendPacing from './011_send_pacing.ts';
import * as statusChanges from './012_status_changes.ts';
import * as triggersOutbound from './013_triggers_outbound.ts';
import * as campaignTracking from './014_campaign_tracking.ts';
import * as trackingBatches from './015_tracking_batches.ts';
import * as eventsWithoutForeignKeys from './016_events_without_foreign_keys.ts';
import * as eventsDropClickIndex from './018_events_drop_click_index.ts';
import * as eventsContactFromSend from './019_events_contact_from_send.ts';
import * as campaignAutoPauseBase from './021_campaign_auto_pause_base.ts';
import * as sendGroupWrites from './022_send_group_writes.ts';
import * as stepGroupWrites from './023_step_group_writes.ts';
import { MIGRATION_TABLE, upgradeLegacyNames } from './legacy-names.ts';

/**
 * What a migration needs to know to write one definition for both engines; `kind` only for what
 * has no shared form (triggers).
 */
export type MigrationContext = ColumnTypes & { kind: DialectKind };

/**
 * `afterCommit`: work too large for the migrator's one transaction (a backfill), run after it
 * committed, in transactions of its own, on every migrate until it is done (so it must be cheap
 * once done and resume where an interrupted run stopped).
 */
export type MigrationModule = { up: (db: Kysely<any>, ctx: MigrationContext) => Promise<void>; afterCommit?: (dialect: StoreDialect) => Promise<void> };

/**
 * In the order they run: add a new one at the end, numbered above the last (numbers handed out to
 * work done in parallel leave gaps until it is merged). Every name has a number of its own because the migrator sorts pending names by code unit but applied ones (with
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
  '010_send_deferral': sendDeferral,
  '011_send_pacing': sendPacing,
  '012_status_changes': statusChanges,
  '013_triggers_outbound': triggersOutbound,
  '014_campaign_tracking': campaignTracking,
  '015_tracking_batches': trackingBatches,
  '016_events_without_foreign_keys': eventsWithoutForeignKeys,
  '018_events_drop_click_index': eventsDropClickIndex,
  '019_events_contact_from_send': eventsContactFromSend,
  '021_campaign_auto_pause_base': campaignAutoPauseBase,
  '022_send_group_writes': sendGroupWrites,
  '023_step_group_writes': stepGroupWrites,
};

export interface MigrateResult {
  applied: string[];
}

export async function migrateToLatest(dialect: StoreDialect): Promise<MigrateResult> {
  const upgraded = await upgradeLegacyNames(dialect, MIGRATIONS);
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, mod] of Object.entries(MIGRATIONS)) out[name] = { up: (d) => mod.up(d, { ...dialect.columns, kind: dialect.kind }) };
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
  for (const mod of Object.values(MIGRATIONS)) await mod.afterCommit?.(dialect);
  return { applied: [...upgraded, ...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)] };
}
