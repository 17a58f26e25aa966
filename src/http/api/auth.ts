import type { Context as HonoContext } from 'hono';
import type { Clock } from '../../core/clock.ts';
import { tokenMatches } from '../admin/auth.ts';
import { clientIp } from '../client-ip.ts';
import type { Limiter } from '../rate-limit/index.ts';
import { ipBucket } from '../rate-limit/keys.ts';
import { type Problem, problem } from './problem.ts';

/** Failed attempts one client network may make per window before every request of it is refused. */
export const AUTH_FAILURE_RULE = { name: 'api:auth-failed', points: 10, windowSec: 60 } as const;
const MAX_BLOCKED = 10_000;

/** `Authorization: Bearer <token>` and nothing else: the API is for scripts, not for a browser prompt. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || header.length > 4096) return undefined;
  return /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header)?.[1];
}

/** A token check's answer: right, wrong (counted), or refused because the network guessed too often. */
export type GateResult = { ok: true } | { ok: false; retryAfterSec?: number };

/**
 * The admin token check with failed attempts rate limited per client network (the IP bucket of
 * rate-limit/keys.ts). Only failures are counted; once a network is over the limit, every attempt
 * from it is refused until the window ends, a right token included, so guessing cannot go on by
 * mixing in good requests. The refusal is remembered here, per process; the count itself lives in
 * the `rateLimitStore`, so with Redis or the database a fleet shares it. The API's bearer header and
 * the console's sign-in form both pass through one.
 */
export function createTokenGate(opts: { token: string; limiter: Limiter; clock: Clock; trustProxy: boolean }) {
  const blocked = new Map<string, number>();
  const refuse = (until: number, now: number): GateResult => ({ ok: false, retryAfterSec: Math.max(1, Math.ceil((until - now) / 1000)) });
  return async (c: HonoContext, presented: string | undefined): Promise<GateResult> => {
    const bucket = ipBucket(clientIp(c, opts.trustProxy));
    const now = opts.clock.now();
    const until = blocked.get(bucket);
    if (until !== undefined) {
      if (until > now) return refuse(until, now);
      blocked.delete(bucket);
    }
    if (tokenMatches(presented, opts.token)) return { ok: true };
    const decision = await opts.limiter.consume(bucket);
    if (!decision.allowed) {
      if (blocked.size >= MAX_BLOCKED) for (const [k, t] of blocked) if (t <= now) blocked.delete(k);
      const end = now + decision.retryAfterSec * 1000;
      blocked.set(bucket, end);
      return refuse(end, now);
    }
    return { ok: false };
  };
}

/** The API's guard: the bearer header through the token gate, a refusal as a problem. */
export function createApiAuth(opts: { token: string; limiter: Limiter; clock: Clock; trustProxy: boolean }) {
  const gate = createTokenGate(opts);
  return async (c: HonoContext): Promise<{ problem: Problem; headers: Record<string, string> } | undefined> => {
    const r = await gate(c, bearerToken(c.req.header('authorization')));
    if (r.ok) return undefined;
    if (r.retryAfterSec !== undefined) {
      return {
        problem: problem('RATE_LIMITED', 429, 'Too many failed authentication attempts from your network; try again later'),
        headers: { 'Retry-After': String(r.retryAfterSec) },
      };
    }
    return { problem: problem('UNAUTHORIZED', 401, 'Send the admin token as `Authorization: Bearer <token>`'), headers: { 'WWW-Authenticate': 'Bearer realm="notify"' } };
  };
}
