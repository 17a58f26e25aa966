import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { Logger } from 'pino';
import type { BounceMailbox } from './bounces/index.ts';
import type { Config, ConfigInput, LoadConfigOptions } from './config.ts';
import type { Context } from './context.ts';
import type { CampaignsApi } from './core/campaigns.ts';
import type { Clock } from './core/clock.ts';
import type { ContactListQuery, ContactPage } from './core/contact-query.ts';
import type { EnrollInput, SequenceInput } from './core/drips.ts';
import type { NotifyEventMap, NotifyEventName } from './core/events.ts';
import type { List, ListInput } from './core/lists.ts';
import type { OutboundRunResult } from './core/outbound-delivery.ts';
import type { PersonData } from './core/person-data.ts';
import type { SendInput } from './core/send.ts';
import type { CampaignReport, ReportOptions } from './core/stats.ts';
import type { TrackingRecorderOptions } from './core/tracking-recorder.ts';
import type { CampaignStats, Contact, ContactInput, DripRunResult, Enrollment, SendRecord, Sequence } from './core/types.ts';
import type { events as eventHelpers } from './events/index.ts';
import type { Services } from './services.ts';
import type { Store } from './store/contract.ts';

export interface CreateNotifyOptions extends Partial<ConfigInput>, LoadConfigOptions {
  /** time source; tests pass manualClock() */
  clock?: Clock;
  /** used for webhook certificate fetches and subscription confirmations */
  fetch?: typeof fetch;
  /** a pino logger, or one built from the loaded configuration (the CLI's); default: createLogger(config) */
  logger?: Logger | ((config: Config) => Logger);
  /** run migrations on start (default true) */
  migrate?: boolean;
  /** group commit of open/click events: flush interval and batch size (defaults 100 ms, 1000) */
  tracking?: TrackingRecorderOptions;
}

export interface Notify {
  readonly config: Config;
  readonly contacts: {
    upsert(input: ContactInput): Promise<Contact>;
    get(idOrEmail: number | string): Promise<Contact | undefined>;
    erase(idOrEmail: number | string): Promise<boolean>;
    /** everything held on the person (access request); undefined when there is no such contact */
    export(idOrEmail: number | string): Promise<PersonData | undefined>;
    /** a page of contacts in id order; pass `next` as `after` for the following one */
    list(query?: ContactListQuery): Promise<ContactPage>;
    count(query?: Pick<ContactListQuery, 'list' | 'segment'>): Promise<number>;
    subscribe(idOrEmail: number | string, list: string): Promise<Contact>;
    /** without a list: from everything (the contact becomes `unsubscribed`, as by the unsubscribe link) */
    unsubscribe(idOrEmail: number | string, list?: string): Promise<Contact>;
  };
  readonly lists: {
    /** names are unique whatever their case (DUPLICATE) */
    create(input: ListInput): Promise<List>;
    list(): Promise<List[]>;
    delete(name: string): Promise<void>;
  };
  readonly campaigns: CampaignsApi & {
    /** exactly { total, sent, failed, opened, clicked }, read from the per-campaign counters (no scan), after this process's buffered opens and clicks are written */
    getCampaignStats(campaignId: number): Promise<CampaignStats>;
    /** the richer figures: suppressed, bounced, complained, unsubscribed, human-only, per link, over time */
    getCampaignReport(campaignId: number, options?: ReportOptions): Promise<CampaignReport>;
  };
  readonly drips: {
    createSequence(input: SequenceInput): Promise<Sequence>;
    getSequence(idOrName: number | string): Promise<Sequence | undefined>;
    /** refuses a suppressed contact (SUPPRESSED) and a second enrollment in the same sequence (DUPLICATE) */
    enroll(input: EnrollInput): Promise<Enrollment>;
    getEnrollment(id: number): Promise<Enrollment | undefined>;
    /** one run of notify:process-drips */
    process(): Promise<DripRunResult>;
  };
  /** one message now; returns its send record (status sent, failed or suppressed) */
  send(input: SendInput): Promise<SendRecord>;
  /** the /notify/* controller as a web-standard handler; pass @hono/node-server's env to get the client IP */
  fetch(request: Request, env?: HttpBindings): Promise<Response>;
  /** the same controller for node:http */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** writes buffered open/click events now (close() does it too) */
  flush(): Promise<void>;
  on<E extends NotifyEventName>(event: E, fn: (payload: NotifyEventMap[E]) => void | Promise<void>): () => void;
  /** outgoing webhooks (option webhooksOut) */
  readonly events: {
    /** for receivers: whether a Notify-Signature header signs this raw body with this secret, recently enough */
    verify: typeof eventHelpers.verify;
    /** one delivery run of what is due (the worker calls it every round) */
    deliver(opts?: { signal?: AbortSignal }): Promise<OutboundRunResult>;
  };
  /**
   * The bounce mailbox (options bounceMailbox + bounceDomain), undefined without one. Each poll
   * applies the reports it can map to a send exactly as webhook events are applied; the worker polls
   * it every round.
   */
  readonly bounces: BounceMailbox | undefined;
  /** internals for the CLI and tests */
  readonly context: InstanceContext;
  /** the domain services the routes and the CLI share (the fields above are their guarded faces) */
  readonly services: Services;
  close(): Promise<void>;
}

/** The context as notify.ts builds it: the domain's, with the store's own face (query builder, dialect) for the CLI and tests. */
export interface InstanceContext extends Context {
  readonly store: Store;
}
