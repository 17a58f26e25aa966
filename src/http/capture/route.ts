import type { Context as HonoContext } from 'hono';
import type { Context } from '../../context.ts';
import { captureContact, type CaptureDeps, captureLists } from '../../core/capture.ts';
import { type CaptureInput, parseCaptureFields } from '../../core/capture-fields.ts';
import { emailKey } from '../../core/email.ts';
import { isNotifyError } from '../../errors.ts';
import { clientIp } from '../client-ip.ts';
import { isStoreUnavailable, STORE_RETRY_AFTER_SEC } from '../store-unavailable.ts';
import type { Limiter } from '../rate-limit/index.ts';
import { addressBucket, ipBucket } from '../rate-limit/keys.ts';
import { BodyError, type Fields, readFields } from './body.ts';
import { consentSource, safeRelativePath, sameSiteReferer } from './redirect.ts';
import { type Reply, replier, wantsJson } from './respond.ts';

export interface CaptureHandlerDeps extends CaptureDeps {
  ctx: Context;
  /** per client IP (undefined when captureRateLimit is 0) */
  ipLimiter: Limiter | undefined;
  /** per email address, against subscription bombing */
  addressLimiter: Limiter;
}

export const MESSAGES = {
  subscribed: 'Thanks for subscribing!',
  confirm: 'Thanks! Please check your inbox and confirm your subscription.',
  rateLimited: 'Too many sign-ups from your network. Please try again in a minute.',
  badRedirect: 'The form is misconfigured: its redirect must be a path on this site.',
  unavailable: 'Sorry, we could not save your sign-up right now. Please try again later.',
} as const;

/** POST /notify/capture. Order matters: count the post first, then read it, then decide. */
export async function handleCapture(c: HonoContext, deps: CaptureHandlerDeps): Promise<Response> {
  const { config, log } = deps.ctx;
  const req = c.req.raw;
  const ip = clientIp(c, config.trustProxy);
  const ipDecision = deps.ipLimiter ? await deps.ipLimiter.consume(ipBucket(ip)) : undefined;
  let fields: Fields | undefined;
  let bodyError: BodyError | undefined;
  try {
    fields = await readFields(req);
  } catch (err) {
    if (!(err instanceof BodyError)) throw err;
    bodyError = err;
  }
  const rawRedirect = fields?.get('redirect')?.[0];
  const redirect = rawRedirect ? safeRelativePath(rawRedirect) : undefined;
  const origins = [new URL(req.url).origin, new URL(config.baseUrl).origin];
  const reply = replier(c, { json: wantsJson(req), secure: isSecure(c, config.trustProxy), referer: sameSiteReferer(c.req.header('referer'), origins), redirect });
  const success = config.doubleOptIn ? MESSAGES.confirm : MESSAGES.subscribed;

  if (ipDecision && !ipDecision.allowed) {
    log.info({ ip: ipBucket(ip) }, 'capture: rate limited');
    return reply.fail(429, 'rate_limited', [MESSAGES.rateLimited], ipDecision.retryAfterSec);
  }
  if (bodyError || !fields) return reply.fail(bodyError!.status, bodyError!.code, [bodyError!.message]);
  if (rawRedirect && !redirect) return reply.fail(400, 'bad_redirect', [MESSAGES.badRedirect]);
  // The spec: a filled honeypot gets the normal success answer and nothing is saved.
  if (config.honeypot && fields.get('notify_hp')?.some((v) => v !== '')) {
    log.info({ ip: ipBucket(ip) }, 'capture: honeypot filled, discarded');
    return reply.ok(success);
  }
  let input: CaptureInput;
  try {
    input = parseCaptureFields(fields);
    // a refused list is the post's fault: answered before it counts against the address
    await captureLists(deps.ctx, input.lists);
  } catch (err) {
    if (isNotifyError(err, 'INVALID_EMAIL') || isNotifyError(err, 'INVALID_INPUT')) return reply.fail(422, codeOf(err), [err.message]);
    throw err;
  }
  return store(c, deps, reply, input, { ip, success });
}

async function store(c: HonoContext, deps: CaptureHandlerDeps, reply: Reply, input: CaptureInput, o: { ip: string; success: string }): Promise<Response> {
  const addr = await deps.addressLimiter.consume(addressBucket(emailKey(input.email)));
  if (!addr.allowed) {
    // Same answer as a success: the post may be someone bombing a stranger's inbox, who learns nothing.
    deps.ctx.log.info('capture: per-address limit reached, discarded');
    return reply.ok(o.success);
  }
  try {
    await captureContact(deps, input, { source: consentSource(c.req.header('referer')), ip: o.ip || null });
  } catch (err) {
    if (isNotifyError(err, 'INVALID_INPUT') || isNotifyError(err, 'INVALID_EMAIL')) return reply.fail(422, codeOf(err), [err.message]);
    const busy = isStoreUnavailable(err, deps.ctx.store);
    if (busy || UNAVAILABLE.some((code) => isNotifyError(err, code))) {
      deps.ctx.log.error({ err }, 'capture: could not complete a sign-up');
      return reply.fail(503, 'unavailable', [MESSAGES.unavailable], busy ? STORE_RETRY_AFTER_SEC : undefined);
    }
    throw err;
  }
  return reply.ok(o.success);
}

/** Failures of the service, not of the post: the same post may simply be sent again later. */
const UNAVAILABLE = ['MAILER_FAILED', 'MISSING_SENDER', 'CONFIG_INVALID'] as const;

/** Stable codes for the JSON answer: invalid_email, invalid_name, invalid_list, or invalid_field. */
function codeOf(err: { code: string; details?: Record<string, unknown> }): string {
  if (err.code === 'INVALID_EMAIL') return 'invalid_email';
  const field = String(err.details?.field ?? '');
  return ['email', 'name', 'list'].includes(field) ? `invalid_${field}` : 'invalid_field';
}

function isSecure(c: HonoContext, trustProxy: boolean): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  return trustProxy && c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}
