import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context as HonoContext } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { newToken } from '../../core/tokens.ts';

/**
 * The admin forms change campaigns, and a browser resends Basic-auth credentials with a request a
 * foreign page makes it send: the credential alone is no protection. Each browser session gets a
 * random cookie (SameSite=Strict, HttpOnly, only under /notify/admin); every form carries an HMAC
 * of it under the instance secret, which no other site can read or compute. A POST is refused
 * without the matching token, and whenever the browser says it comes from another site.
 */
const COOKIE = 'notify_admin_session';
const PATH = '/notify/admin';

export function csrfToken(c: HonoContext, secret: string): string {
  const known = pageTokens.get(c.req.raw);
  if (known) return known;
  const session = getCookie(c, COOKIE);
  const token = session && /^[A-Za-z0-9_-]{22}$/.test(session) ? sign(secret, session) : renewCsrfSession(c, secret);
  pageTokens.set(c.req.raw, token);
  return token;
}

/** the form token of the request's page, once csrfToken() has made one (the layout's sign-out form) */
const pageTokens = new WeakMap<Request, string>();
export const pageCsrf = (c: HonoContext): string | undefined => pageTokens.get(c.req.raw);

/** A new random session for the forms (on sign-in, so a token planted before it is worthless after). */
export function renewCsrfSession(c: HonoContext, secret: string): string {
  const session = newToken();
  setCookie(c, COOKIE, session, cookieOptions(c));
  const token = sign(secret, session);
  pageTokens.set(c.req.raw, token);
  return token;
}

export function endCsrfSession(c: HonoContext): void {
  deleteCookie(c, COOKIE, cookieOptions(c));
}

/** Only the admin pages see the cookies; never sent from another site; never over plain http once on https. */
export function cookieOptions(c: HonoContext) {
  return { path: PATH, httpOnly: true, sameSite: 'Strict', secure: new URL(c.req.url).protocol === 'https:' } as const;
}

/** true when the POST carries this session's token and nothing says it comes from another site */
export function csrfOk(c: HonoContext, secret: string, presented: unknown): boolean {
  if (c.req.header('sec-fetch-site') === 'cross-site') return false;
  // the admin pages' no-referrer policy makes a browser send `Origin: null` with its own forms
  const origin = c.req.header('origin');
  if (origin && origin !== 'null' && origin !== new URL(c.req.url).origin) return false;
  const session = getCookie(c, COOKIE);
  if (!session || typeof presented !== 'string' || presented.length > 100) return false;
  const want = Buffer.from(sign(secret, session));
  const got = Buffer.from(presented);
  return got.length === want.length && timingSafeEqual(got, want);
}

function sign(secret: string, session: string): string {
  return createHmac('sha256', secret).update(`admin-csrf:${session}`).digest('base64url');
}
