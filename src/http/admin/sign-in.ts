import type { Context as HonoContext, Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { Views } from '../../render/views.ts';
import type { GateResult } from '../api/auth.ts';
import { BASIC_SIGN_IN_PATH, SIGN_IN_PATH } from './auth.ts';
import { csrfOk, csrfToken, endCsrfSession, renewCsrfSession } from './csrf.ts';
import { adminPage } from './render.ts';
import { endSession, hasSession, type SessionKeys, startSession } from './session.ts';

interface Parts {
  ctx: Context;
  views: Views;
  keys: SessionKeys;
  /** the admin token check shared with the API, failures rate limited per network */
  gate: (c: HonoContext, presented: string | undefined) => Promise<GateResult>;
}

/** GET/POST /notify/admin/sign-in (the token to a session cookie) and POST /notify/admin/sign-out. */
export function registerSignIn(app: Hono, { ctx, views, keys, gate }: Parts): void {
  const page = (c: HonoContext, next: string, error: string | null, status = 200, headers: Record<string, string> = {}) =>
    adminPage(c, views, 'sign_in', { title: 'Sign in', next, error, csrf: csrfToken(c, ctx.secret), signInPage: true }, status).then((res) => {
      for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
      return res;
    });

  app.get(SIGN_IN_PATH, (c) => {
    const next = safeNext(c.req.query('next'));
    if (hasSession(c, keys, ctx.clock.now())) return c.redirect(next, 303);
    return page(c, next, null);
  });

  // reached only with valid Basic credentials (auth.ts challenges for them): the browser now sends them itself
  app.get(BASIC_SIGN_IN_PATH, (c) => c.redirect(safeNext(c.req.query('next')), 303));

  app.post(SIGN_IN_PATH, async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const next = safeNext(typeof form.next === 'string' ? form.next : undefined);
    if (!csrfOk(c, ctx.secret, form.csrf)) return page(c, next, 'This form is out of date or came from another site. Try again.', 403);
    const presented = typeof form.token === 'string' && form.token.length <= 4096 ? form.token : undefined;
    const verdict = await gate(c, presented);
    if (verdict.ok) {
      startSession(c, keys, ctx.clock.now());
      renewCsrfSession(c, ctx.secret);
      return c.redirect(next, 303);
    }
    if (verdict.retryAfterSec !== undefined) {
      return page(c, next, `Too many wrong tokens from your network. Try again in ${verdict.retryAfterSec} seconds.`, 429, { 'Retry-After': String(verdict.retryAfterSec) });
    }
    return page(c, next, 'That is not the admin token.', 401);
  });

  app.post('/notify/admin/sign-out', async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    if (!csrfOk(c, ctx.secret, form.csrf)) return adminPage(c, views, 'not_found', { title: 'Refused', message: 'This form is out of date or came from another site.' }, 403);
    endSession(c);
    endCsrfSession(c);
    return c.redirect(SIGN_IN_PATH, 303);
  });
}

/** where to go after signing in: an admin page of this server, never another site */
export function safeNext(next: string | undefined): string {
  if (!next || next.length > 2000 || !next.startsWith('/notify/admin') || /[\\\s]|\/\//.test(next)) return '/notify/admin';
  return next;
}
