import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * A campaign send that failed for a reason that may pass (an SMTP 4xx, a lost connection, provider
 * throttling) waits as `deferred` until `next_attempt_at`; `attempts` counts the times it was handed
 * to the mailer, so the last one allowed by maxRetries fails it for good. The existing
 * (campaign_id, status) index finds a campaign's due retries.
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('notify_sends')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('notify_sends').addColumn('next_attempt_at', ts).execute();
}
