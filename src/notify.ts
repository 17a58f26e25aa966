import { getRequestListener } from '@hono/node-server';
import { type ApiGuard, createApiGuard } from './api-guard.ts';
import { type BounceMailbox, createBounceMailbox } from './bounces/index.ts';
import { loadConfig } from './config.ts';
import { createLocalRuns } from './core/campaign-control.ts';
import { createCampaignsService } from './core/campaigns.ts';
import { createClickResolver } from './core/click-resolver.ts';
import { systemClock } from './core/clock.ts';
import { createContactsService } from './core/contacts.ts';
import { createDispatcher } from './core/dispatch.ts';
import { runDrips } from './core/drip-run.ts';
import { createDripsService } from './core/drips.ts';
import { createEvents } from './core/events.ts';
import { createListsService } from './core/lists.ts';
import { deliverOutbound } from './core/outbound-delivery.ts';
import { exportPerson } from './core/person-data.ts';
import { type SendInput, sendOne } from './core/send.ts';
import { createStatsService } from './core/stats.ts';
import { createOptin } from './core/optin.ts';
import { createConfirmationSender } from './core/optin-mail.ts';
import { newToken } from './core/tokens.ts';
import { createTrackingRecorder, type TrackingRecorder, type TrackingRecorderOptions } from './core/tracking-recorder.ts';
import { statsAfterFlush } from './core/tracking-stats.ts';
import { applyWebhookEvents } from './core/webhook-events.ts';
import { createEventSink, createPost, events as eventHelpers } from './events/index.ts';
import { adminRoutes } from './http/admin/index.ts';
import { apiRoutes } from './http/api/index.ts';
import { createApp, type RouteModule } from './http/app.ts';
import { captureRoutes } from './http/capture/index.ts';
import { clickRoute } from './http/click.ts';
import { createTrackingFastPath } from './http/fast-path.ts';
import { openRoute } from './http/open.ts';
import { preferencesRoute } from './http/preferences.ts';
import { createLimiterStore } from './http/rate-limit/index.ts';
import { unsubscribeRoute } from './http/unsubscribe.ts';
import { webhookRoute } from './http/webhook.ts';
import { createLogger } from './log.ts';
import { createMailer } from './mail/index.ts';
import { composerFor } from './mail/message.ts';
import type { CreateNotifyOptions, InstanceContext, Notify } from './notify-api.ts';
import { createInstancePacer } from './pacing/index.ts';
import { createViews, type Views } from './render/views.ts';
import type { Services } from './services.ts';
import { createStore } from './store/index.ts';
import { type ResolvedDriver, resolveWebhookDriver } from './webhooks/index.ts';

export type { CreateNotifyOptions, InstanceContext, Notify } from './notify-api.ts';

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
    const base = { config, store, events, clock: clock ?? systemClock, log, secret, fetch: fetchImpl ?? globalThis.fetch, runs: createLocalRuns() };
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
  const guard = createApiGuard((err) => ctx.store.dialect.isConnectionError(err));
  const recorder = createTrackingRecorder(ctx, tracking);
  const views = createViews(ctx.config.viewsPath);
  const services = buildServices(ctx, recorder, views);
  const limits = createLimiterStore(ctx);
  const bounces = bounceMailboxFor(ctx);
  const post = createPost(ctx.fetch);
  const closers: (() => Promise<void>)[] = [];
  const app = createApp({ ctx, services, limits, recorder, views, onClose: (fn) => closers.push(fn), webhook, notify: () => self }, ROUTES);
  const viaHono = getRequestListener((request, env) => app.fetch(request, env));
  const fastPath = createTrackingFastPath(ctx, recorder, services.clicks);
  const whileOpen = guard.wrap;
  // the JSON API (http/api) calls these operations: the app above reaches them once they exist
  const self: Notify = {
    config: ctx.config,
    ...domainApi(ctx, services, whileOpen),
    send: whileOpen((input: SendInput) => sendOne(ctx, services.contacts, input)),
    fetch: (request, env) => Promise.resolve(app.fetch(request, env)),
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
    services,
    async close() {
      if (!guard.close()) return;
      // Buffered tracking events go to the database before it closes.
      await recorder.close();
      await bounces?.close();
      for (const fn of closers) await fn().catch((err) => ctx.log.error({ err }, 'close failed'));
      await limits.close().catch((err) => ctx.log.error({ err }, 'close failed'));
      await ctx.mailer.close?.();
      await ctx.pacer?.close();
      await ctx.store.close();
    },
  };
  return self;
}

/** Every domain service of the instance, built here once: the API, the routes and the CLI share them. */
function buildServices(ctx: InstanceContext, recorder: TrackingRecorder, views: Views): Services {
  const contacts = createContactsService(ctx);
  return {
    contacts,
    lists: createListsService(ctx),
    campaigns: createCampaignsService(ctx),
    drips: createDripsService(ctx, contacts),
    // figures read in this process include the opens and clicks it has buffered
    stats: statsAfterFlush(createStatsService(ctx), recorder),
    clicks: createClickResolver(ctx),
    optin: createOptin(ctx, views, createConfirmationSender(ctx)),
  };
}

/** The domain's services as the API exposes them, each refusing work once the instance is closed. */
function domainApi(ctx: InstanceContext, services: Services, whileOpen: ApiGuard['wrap']): Pick<Notify, 'contacts' | 'lists' | 'campaigns' | 'drips'> {
  const { contacts, lists, stats, campaigns, drips } = services;
  return {
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
  };
}
