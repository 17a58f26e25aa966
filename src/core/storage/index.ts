import type { CampaignsRepo } from './campaigns.ts';
import type { ContactsRepo } from './contacts.ts';
import type { CountersRepo } from './counters.ts';
import type { EnrollmentsRepo } from './enrollments.ts';
import type { EventsRepo } from './events.ts';
import type { HistoryRepo } from './history.ts';
import type { LinksRepo } from './links.ts';
import type { ListsRepo } from './lists.ts';
import type { MetaRepo } from './meta.ts';
import type { OptinRepo } from './optin.ts';
import type { PacingRepo } from './pacing.ts';
import type { EventOutbox, OutboundRepo } from './outbound.ts';
import type { RateLimitsRepo } from './rate-limits.ts';
import type { SendsRepo } from './sends.ts';
import type { SequencesRepo } from './sequences.ts';
import type { StatsRepo } from './stats.ts';
import type { TrackingRepo } from './tracking-batches.ts';
import type { WebhookReceiptsRepo } from './webhook-receipts.ts';

/**
 * The storage the domain needs, declared by the domain: one repository per aggregate (each in a
 * file of this folder with its row shapes). src/store/ implements it on SQLite and PostgreSQL; the
 * domain never sees SQL, a dialect's error codes or the query builder. A unique violation a caller
 * can cause reaches the domain as NotifyError('DUPLICATE').
 */
export interface Store {
  readonly campaigns: CampaignsRepo;
  readonly contacts: ContactsRepo;
  readonly counters: CountersRepo;
  readonly enrollments: EnrollmentsRepo;
  readonly events: EventsRepo;
  /** a contact's sends, events and status changes, for the admin timeline */
  readonly history: HistoryRepo;
  readonly links: LinksRepo;
  readonly lists: ListsRepo;
  readonly meta: MetaRepo;
  /** read-only queries for stats and the admin pages */
  readonly stats: StatsRepo;
  readonly tracking: TrackingRepo;
  readonly optin: OptinRepo;
  /** the outbox of outgoing webhooks, as the worker delivers it */
  readonly outbound: OutboundRepo;
  readonly rateLimits: RateLimitsRepo;
  /** next sending turns for `rateLimitStore: 'database'` */
  readonly pacing: PacingRepo;
  readonly sends: SendsRepo;
  /** ids of webhook deliveries already applied (a redelivery applies once) */
  readonly webhookReceipts: WebhookReceiptsRepo;
  readonly sequences: SequencesRepo;
  /** tells a lost or refused database connection from a bad query (callers keep work and retry) */
  readonly dialect: { isConnectionError(err: unknown): boolean };
  /**
   * Runs `fn` in one database transaction with repositories bound to it: all of its writes land
   * or none do (a crash or a lost connection in between leaves no half-applied state). The
   * repositories' own multi-statement methods (contacts.upsert/erase, campaigns.create) open
   * their own transactions and are not for use inside `fn`.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The repositories available inside Store.transaction, and its outbox: the events its writes cause
 * land with them, and reach in-process listeners after the commit.
 */
export type StoreTx = Pick<Store, 'campaigns' | 'contacts' | 'counters' | 'enrollments' | 'events' | 'lists' | 'sends' | 'webhookReceipts'> & { readonly outbox: EventOutbox };
