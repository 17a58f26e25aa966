import { createHash } from 'node:crypto';
import type { Context as HonoContext } from 'hono';
import { applyWebhookEvents } from '../core/webhook-events.ts';
import { isParsedWebhookEvent, type WebhookRequest } from '../webhooks/contract.ts';
import type { ResolvedDriver } from '../webhooks/index.ts';
import type { HttpParts, RouteModule } from './app.ts';
import { readCapped } from './read-body.ts';
import { isStoreUnavailable, STORE_RETRY_AFTER_SEC } from './store-unavailable.ts';

/** SendGrid batches are the largest bodies; anything past this is no provider's. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;

/**
 * POST /notify/webhook: 400 without a webhookDriver; 403 when the driver's
 * verifySignature fails (nothing else is looked at); a subscription confirmation is confirmed
 * (502 when the provider's confirm call fails, so it retries); otherwise the parsed events are
 * applied and 200 answers only once their effects and receipts are stored (503 when the database
 * is unavailable, so the provider redelivers). Machine-to-machine: no cookie, no CSRF token.
 */
export const webhookRoute: RouteModule = (app, parts) => {
  app.post('/notify/webhook', (c) => handle(c, parts));
  app.all('/notify/webhook', () => new Response('Method not allowed', { status: 405, headers: { Allow: 'POST' } }));
};

async function handle(c: HonoContext, parts: HttpParts): Promise<Response> {
  const resolved = parts.webhook;
  if (!resolved) return c.text('No webhookDriver is configured', 400);
  const body = await readCapped(c.req.raw, MAX_BODY_BYTES).catch(() => null);
  if (body === null) return c.text('Body too large or unreadable', 413);
  const request: WebhookRequest = { method: c.req.method, url: c.req.url, headers: c.req.raw.headers, body, text: body.toString('utf8') };
  const log = parts.ctx.log;
  if (!(await ask(() => resolved.driver.verifySignature(request), false, resolved, 'verifySignature', parts))) {
    log.warn({ driver: resolved.name }, 'webhook signature check failed');
    return c.text('Invalid signature', 403);
  }
  if (await ask(() => resolved.driver.isSubscriptionConfirmation(request), false, resolved, 'isSubscriptionConfirmation', parts)) {
    try {
      await resolved.driver.confirmSubscription(request);
    } catch (err) {
      log.error({ err, driver: resolved.name }, 'webhook subscription confirmation failed');
      return c.text('Subscription confirmation failed', 502);
    }
    log.info({ driver: resolved.name }, 'webhook subscription confirmed');
    return c.json({ confirmed: true });
  }
  const parsed = await ask(() => resolved.driver.parseEvents(request), undefined, resolved, 'parseEvents', parts);
  if (!Array.isArray(parsed)) return c.text('Events could not be parsed', 400);
  const events = parsed.filter(isParsedWebhookEvent);
  if (events.length < parsed.length) log.warn({ driver: resolved.name, dropped: parsed.length - events.length }, 'webhook driver returned malformed events');
  try {
    const result = await applyWebhookEvents(parts.ctx, resolved.name, events, createHash('sha256').update(body).digest('hex'));
    return c.json(result);
  } catch (err) {
    if (!isStoreUnavailable(err, parts.ctx.store)) throw err;
    log.error({ err }, 'webhook events could not be stored');
    return c.text('Temporarily unavailable', 503, { 'Retry-After': String(STORE_RETRY_AFTER_SEC) });
  }
}

/** A driver method's answer; a throwing driver counts as `fallback` (and is logged). */
async function ask<T>(fn: () => T | Promise<T>, fallback: T, resolved: ResolvedDriver, method: string, parts: HttpParts): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    parts.ctx.log.error({ err, driver: resolved.name, method }, 'webhook driver threw');
    return fallback;
  }
}

