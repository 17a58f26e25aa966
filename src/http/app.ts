import { Hono } from 'hono';
import type { Context } from '../context.ts';
import type { TrackingRecorder } from '../core/tracking-recorder.ts';
import type { Views } from '../render/views.ts';
import type { Notify } from '../notify.ts';
import type { Services } from '../services.ts';
import type { LimiterStore } from './rate-limit/index.ts';
import { isStoreUnavailable, STORE_RETRY_AFTER_SEC } from './store-unavailable.ts';
import type { ResolvedDriver } from '../webhooks/index.ts';

/**
 * The /notify controller. Each endpoint lives in its own file under http/ and registers itself
 * here; the app never knows SQL, and the domain never knows status codes.
 */
export type NotifyApp = Hono;

export interface HttpParts {
  ctx: Context;
  /** the instance's domain services (notify.ts builds them once) */
  services: Services;
  /** the rate-limit counters (`rateLimitStore`), one store for every route, closed by notify.close() */
  limits: LimiterStore;
  /** group-commit buffer for open and click events (flushed by notify.close()) */
  recorder: TrackingRecorder;
  /** shipped views with the application's overrides under viewsPath */
  views: Views;
  /** registers cleanup run by notify.close() (e.g. a rate-limit store's Redis connection) */
  onClose?: (fn: () => Promise<void>) => void;
  /** the configured webhook driver; absent = POST /notify/webhook answers 400 */
  webhook?: ResolvedDriver;
  /** the public instance, once built: the JSON API calls its operations */
  notify?: () => Notify;
}

export type RouteModule = (app: Hono, parts: HttpParts) => void;

export function createApp(parts: HttpParts, routes: RouteModule[]): NotifyApp {
  const app = new Hono();
  for (const register of routes) register(app, parts);
  app.notFound((c) => c.text('Not found', 404));
  app.onError((err, c) => {
    parts.ctx.log.error({ err, path: c.req.path }, 'request failed');
    // the same request may simply be sent again once the database is back
    if (isStoreUnavailable(err, parts.ctx.store)) return c.text('Temporarily unavailable', 503, { 'Retry-After': String(STORE_RETRY_AFTER_SEC) });
    return c.text('Internal error', 500);
  });
  return app;
}
