import { NotifyError } from '../errors.ts';
import type { EventSink } from '../core/storage/outbound.ts';
import type { Kysely } from 'kysely';
import type { Store, StoreTx } from './contract.ts';
import { createOutbox, deferredOutbox, type Outbox } from './outbox.ts';
import { createOutboundRepo } from './repos/outbound.ts';
import type { StoreDialect } from './dialect.ts';
import { type MigrateResult, migrateToLatest } from './migrations/index.ts';
import type { Database } from './schema.ts';
import { createPostgresDialect } from './postgres/index.ts';
import { createCampaignsRepo } from './repos/campaigns.ts';
import { createContactsRepo } from './repos/contacts.ts';
import { createCountersRepo } from './repos/counters.ts';
import { createEnrollmentsRepo } from './repos/enrollments.ts';
import { createEventsRepo } from './repos/events.ts';
import { createHistoryRepo } from './repos/history.ts';
import { createLinksRepo } from './repos/links.ts';
import { createListsRepo } from './repos/lists.ts';
import { createMetaRepo } from './repos/meta.ts';
import { createStatsRepo } from './repos/stats.ts';
import { createTrackingRepo } from './repos/tracking-batches.ts';
import { createOptinRepo } from './repos/optin.ts';
import { createPacingRepo } from './repos/pacing.ts';
import { createRateLimitsRepo } from './repos/rate-limits.ts';
import { createSendsRepo } from './repos/sends.ts';
import { createWebhookReceiptsRepo } from './repos/webhook-receipts.ts';
import { createSequencesRepo } from './repos/sequences.ts';
import { createSqliteDialect } from './sqlite/index.ts';

export type { Store, StoreTx } from './contract.ts';

export function createDialect(url: string): StoreDialect {
  if (url.startsWith('sqlite:')) return createSqliteDialect(url);
  if (/^postgres(ql)?:\/\//.test(url)) return createPostgresDialect(url);
  throw new NotifyError('CONFIG_INVALID', `Option 'database' must be 'sqlite:<path>' or 'postgres://...' (got ${JSON.stringify(url)})`, { option: 'database' });
}

/** `events`: where the events that store writes cause go (webhooksOut endpoints, in-process listeners) */
export function createStore(url: string, events?: EventSink): Store {
  const dialect = createDialect(url);
  const { db } = dialect;
  const outbox = createOutbox(events, dialect);
  return {
    db,
    dialect,
    ...transactionRepos(db, dialect, outbox),
    history: createHistoryRepo(db),
    links: createLinksRepo(db),
    meta: createMetaRepo(db),
    stats: createStatsRepo(db),
    tracking: createTrackingRepo(db, dialect, outbox),
    optin: createOptinRepo(db, outbox),
    outbound: createOutboundRepo(db, dialect),
    rateLimits: createRateLimitsRepo(db),
    pacing: createPacingRepo(db, dialect),
    sequences: createSequencesRepo(db, dialect),
    transaction: (fn) => inTransaction(db, dialect, outbox, fn),
    migrate: () => migrate(dialect),
    close: () => dialect.close(),
  };
}

/** The repositories a transaction offers (StoreTx), on the store's connection or the transaction's. */
function transactionRepos(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): Omit<StoreTx, 'db' | 'outbox'> {
  return {
    campaigns: createCampaignsRepo(db, dialect, outbox),
    contacts: createContactsRepo(db, dialect, outbox),
    counters: createCountersRepo(db),
    enrollments: createEnrollmentsRepo(db, dialect, outbox),
    events: createEventsRepo(db, dialect),
    lists: createListsRepo(db, dialect, outbox),
    sends: createSendsRepo(db, dialect, outbox),
    webhookReceipts: createWebhookReceiptsRepo(db),
  };
}

async function inTransaction<T>(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
  // events the transaction's writes cause reach listeners only once it has committed
  const held = deferredOutbox(outbox);
  const result = await db.transaction().execute((trx) =>
    fn({
      db: trx,
      ...transactionRepos(trx, dialect, held.outbox),
      outbox: {
        async add(events, now) {
          await held.outbox.write(trx, events, now);
          held.outbox.publish(events);
        },
      },
    }),
  );
  held.committed();
  return result;
}

async function migrate(dialect: StoreDialect): Promise<MigrateResult> {
  try {
    await dialect.prepare();
    return await migrateToLatest(dialect);
  } catch (err) {
    if (err instanceof NotifyError) throw err;
    throw new NotifyError('STORE_UNAVAILABLE', `Could not migrate ${dialect.kind} database: ${(err as Error).message}`, {}, { cause: err });
  }
}
