import type { Kysely } from 'kysely';
import type { DialectKind, StoreDialect } from './dialect.ts';
import type { MigrateResult } from './migrations/index.ts';
import type { CampaignsRepo } from './repos/campaigns.ts';
import type { ContactsRepo } from './repos/contacts.ts';
import type { CountersRepo } from './repos/counters.ts';
import type { EnrollmentsRepo } from './repos/enrollments.ts';
import type { EventsRepo } from './repos/events.ts';
import type { LinksRepo } from './repos/links.ts';
import type { ListsRepo } from './repos/lists.ts';
import type { MetaRepo } from './repos/meta.ts';
import type { StatsRepo } from './repos/stats.ts';
import type { TrackingRepo } from './repos/tracking-batches.ts';
import type { OptinRepo } from './repos/optin.ts';
import type { RateLimitsRepo } from './repos/rate-limits.ts';
import type { SendsRepo } from './repos/sends.ts';
import type { WebhookReceiptsRepo } from './repos/webhook-receipts.ts';
import type { SequencesRepo } from './repos/sequences.ts';
import type { Database } from './schema.ts';

/**
 * The storage contract the domain talks to. One repository per aggregate, each in store/repos/
 * beside its interface. The SQL lives only below store/; the dialect (sqlite/, postgres/) holds
 * what differs between engines.
 */
export interface Store {
  readonly kind: DialectKind;
  /** for repositories and the dialect only; the domain uses the repositories */
  readonly db: Kysely<Database>;
  readonly dialect: StoreDialect;
  readonly campaigns: CampaignsRepo;
  readonly contacts: ContactsRepo;
  readonly counters: CountersRepo;
  readonly enrollments: EnrollmentsRepo;
  readonly events: EventsRepo;
  readonly links: LinksRepo;
  readonly lists: ListsRepo;
  readonly meta: MetaRepo;
  /** read-only queries for stats and the admin pages */
  readonly stats: StatsRepo;
  readonly tracking: TrackingRepo;
  readonly optin: OptinRepo;
  readonly rateLimits: RateLimitsRepo;
  readonly sends: SendsRepo;
  /** ids of webhook deliveries already applied (a redelivery applies once) */
  readonly webhookReceipts: WebhookReceiptsRepo;
  readonly sequences: SequencesRepo;
  /**
   * Runs `fn` in one database transaction with repositories bound to it: all of its writes land
   * or none do (a crash or a lost connection in between leaves no half-applied state). The
   * repositories' own multi-statement methods (contacts.upsert/erase, campaigns.create) open
   * their own transactions and are not for use inside `fn`.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  migrate(): Promise<MigrateResult>;
  close(): Promise<void>;
}

/** The repositories available inside Store.transaction. */
export type StoreTx = Pick<Store, 'kind' | 'contacts' | 'counters' | 'enrollments' | 'events' | 'sends' | 'webhookReceipts'> & { readonly db: Kysely<Database> };
