import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import type { Logger } from 'pino';
import { type Config, type ConfigInput, type LoadConfigOptions, loadConfig } from './config.ts';
import { createLogger } from './log.ts';
import type { Context } from './context.ts';
import { type Clock, systemClock } from './core/clock.ts';
import { type CampaignsApi, createCampaignsService } from './core/campaigns.ts';
import { type ContactListQuery, type ContactPage, createContactsService } from './core/contacts.ts';
import { createDispatcher } from './core/dispatch.ts';
import { createListsService, type List, type ListInput } from './core/lists.ts';
import { exportPerson, type PersonData } from './core/person-data.ts';
import { runDrips } from './core/drip-run.ts';
import { createDripsService, type EnrollInput, type SequenceInput } from './core/drips.ts';
import { createEvents, type NotifyEventMap, type NotifyEventName } from './core/events.ts';
import { deliverOutbound, type OutboundRunResult } from './core/outbound-delivery.ts';
import { createEventSink, createPost, events as eventHelpers } from './events/index.ts';
import { type CampaignReport, createStatsService, type ReportOptions } from './core/stats.ts';
import { type SendInput, sendOne } from './core/send.ts';
import { newToken } from './core/tokens.ts';
import { createTrackingRecorder, type TrackingRecorderOptions } from './core/tracking-recorder.ts';
import { createClickResolver } from './core/click-resolver.ts';
import { statsAfterFlush } from './core/tracking-stats.ts';
import type { CampaignStats, Contact, ContactInput, DripRunResult, Enrollment, SendRecord, Sequence } from './core/types.ts';
import { isNotifyError, NotifyError } from './errors.ts';
import { adminRoutes } from './http/admin/index.ts';
import { apiRoutes } from './http/api/index.ts';
import { createApp, type RouteModule } from './http/app.ts';
import { captureRoutes } from './http/capture/index.ts';
import { clickRoute } from './http/click.ts';
import { createTrackingFastPath } from './http/fast-path.ts';
import { openRoute } from './http/open.ts';
import { preferencesRoute } from './http/preferences.ts';
import { unsubscribeRoute } from './http/unsubscribe.ts';
import { webhookRoute } from './http/webhook.ts';
import { type BounceMailbox, createBounceMailbox } from './bounces/index.ts';
import { applyWebhookEvents } from './core/webhook-events.ts';
import { createMailer } from './mail/index.ts';
import { createInstancePacer } from './pacing/index.ts';
import { composerFor } from './mail/message.ts';
import { createViews } from './render/views.ts';
import type { Store } from './store/contract.ts';
import { createStore } from './store/index.ts';
import { type ResolvedDriver, resolveWebhookDriver } from './webhooks/index.ts';

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
  close(): Promise<void>;
}

/** The context as notify.ts builds it: the domain's, with the store's own face (query builder, dialect) for the CLI and tests. */
export interface InstanceContext extends Context {
  readonly store: Store;
}

const ROUTES: RouteModule[] = [openRoute, clickRoute, unsubscribeRoute, preferencesRoute, webhookRoute, adminRoutes, apiRoutes, captureRoutes];

export async function createNotify(options: CreateNotifyOptions = {}): Promise<Notify> {
  const { clock, fetch: fetchImpl, logger, migrate, tracking, configFile, envFile, env, cwd, ...overrides } = options;
  const config = await loadConfig(overrides, { configFile, envFile, env, cwd });
  const log = typeof logger === 'function' ? logger(config) : (logger ?? createLogger(config));
  const events = createEvents((err, event) => log.error({ err, event }, 'event listener failed'));
  const store = createStore(config.database, createEventSink(config, events));
  try {
    if (migrate !== false) await store.migrate();
    const secret = config.secret || (await store.meta.getOrSet('secret', newToken() + newToken()));
    const base = { config, store, events, clock: clock ?? systemClock, log, secret, fetch: fetchImpl ?? globalThis.fetch };
    const webhook = await resolveWebhookDriver(config, { fetch: base.fetch, now: () => new Date(base.clock.now()), log, cwd: cwd ?? process.cwd() });
    // testMode builds a mailer that only logs: the configured one is never made
    const mailer = createMailer(config, log, { fetch: base.fetch });
    const pacer = createInstancePacer(base);
    return assemble({ ...base, mailer, pacer, dispatcher: createDispatcher({ ...base, mailer }, composerFor) }, tracking, webhook);
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** The mailbox wired to this instance: sends found by token, events applied as the webhook route applies them. */
function bounceMailboxFor(ctx: InstanceContext): BounceMailbox | undefined {
  const { bounceMailbox, bounceDomain } = ctx.config;
  if (!bounceMailbox) return undefined;
  return createBounceMailbox({
    url: bounceMailbox,
    bounceDomain,
    lookupSend: (token) => ctx.store.sends.getByToken(token),
    apply: (events, receipt) => applyWebhookEvents(ctx, 'bounce-mailbox', events, receipt.id),
    log: ctx.log,
  });
}

function assemble(ctx: InstanceContext, tracking?: TrackingRecorderOptions, webhook?: ResolvedDriver): Notify {
  const contacts = createContactsService(ctx);
  const lists = createListsService(ctx);
  const recorder = createTrackingRecorder(ctx, tracking);
  // figures read in this process include the opens and clicks it has buffered
  const stats = statsAfterFlush(createStatsService(ctx), recorder);
  const campaigns = createCampaignsService(ctx);
  const drips = createDripsService(ctx);
  const closers: (() => Promise<void>)[] = [];
  const clicks = createClickResolver(ctx);
  const bounces = bounceMailboxFor(ctx);
  const post = createPost(ctx.fetch);
  const app = createApp({ ctx, recorder, clicks, views: createViews(ctx.config.viewsPath), onClose: (fn) => closers.push(fn), webhook, notify: () => self }, ROUTES);
  const viaHono = getRequestListener((request, env) => app.fetch(request, env));
  const fastPath = createTrackingFastPath(ctx, recorder, clicks);
  const handle = (request: Request, env?: HttpBindings) => Promise.resolve(app.fetch(request, env));
  let closed = false;
  /**
   * Every API member refuses work once close() has run, and reports a lost database connection as
   * STORE_UNAVAILABLE (the driver's own error stays as the cause) rather than a bare socket error.
   */
  const whileOpen =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (closed) throw new NotifyError('CLOSED');
      try {
        return await fn(...args);
      } catch (err) {
        if (!isNotifyError(err) && ctx.store.dialect.isConnectionError(err)) {
          throw new NotifyError('STORE_UNAVAILABLE', `Database is unavailable: ${(err as Error).message || String(err)}`, {}, { cause: err });
        }
        throw err;
      }
    };
  // the JSON API (http/api) calls these operations: the app above reaches them once they exist
  const self: Notify = {
    config: ctx.config,
    contacts: {
      upsert: whileOpen(contacts.upsert),
      get: whileOpen(contacts.get),
      erase: whileOpen(contacts.erase),
      export: whileOpen((idOrEmail: number | string) => exportPerson(ctx, contacts, idOrEmail)),
      list: whileOpen(contacts.list),
      count: whileOpen(contacts.count),
      subscribe: whileOpen(contacts.subscribe),
      unsubscribe: whileOpen(contacts.unsubscribe),
    },
    lists: {
      create: whileOpen(lists.create),
      list: whileOpen(lists.list),
      delete: whileOpen(lists.delete),
    },
    campaigns: {
      create: whileOpen(campaigns.create),
      get: whileOpen(campaigns.get),
      send: whileOpen(campaigns.send),
      list: whileOpen(campaigns.list),
      update: whileOpen(campaigns.update),
      delete: whileOpen(campaigns.delete),
      schedule: whileOpen(campaigns.schedule),
      pause: whileOpen(campaigns.pause),
      resume: whileOpen(campaigns.resume),
      cancel: whileOpen(campaigns.cancel),
      sendTest: whileOpen(campaigns.sendTest),
      audience: whileOpen(campaigns.audience),
      getCampaignStats: whileOpen(stats.getCampaignStats),
      getCampaignReport: whileOpen(stats.getCampaignReport),
    },
    drips: {
      createSequence: whileOpen(drips.createSequence),
      getSequence: whileOpen(drips.getSequence),
      enroll: whileOpen(drips.enroll),
      getEnrollment: whileOpen(drips.getEnrollment),
      process: whileOpen(async () => {
        const { sent, failed, retried, reclaimed } = await runDrips(ctx);
        return { sent, failed, retried, reclaimed };
      }),
    },
    send: whileOpen((input: SendInput) => sendOne(ctx, input)),
    fetch: handle,
    // opens and cached clicks straight on node:http (http/fast-path.ts); everything else through Hono
    listener: (req, res) => {
      if (!fastPath(req, res)) void viaHono(req, res);
    },
    flush: () => recorder.flush(),
    on: (event, fn) => ctx.events.on(event, fn),
    events: {
      verify: eventHelpers.verify,
      deliver: whileOpen((opts?: { signal?: AbortSignal }) => deliverOutbound(ctx, post, opts)),
    },
    bounces,
    context: ctx,
    async close() {
      if (closed) return;
      closed = true;
      // Buffered tracking events go to the database before it closes.
      await recorder.close();
      await bounces?.close();
      for (const fn of closers) await fn().catch((err) => ctx.log.error({ err }, 'close failed'));
      await ctx.mailer.close?.();
      await ctx.pacer?.close();
      await ctx.store.close();
    },
  };
  return self;
}
