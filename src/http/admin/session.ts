import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context as HonoContext } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { newToken } from '../../core/tokens.ts';
import { cookieOptions } from './csrf.ts';

/**
 * The console's sign-in, kept in a signed cookie rather than a table: `<expires>.<nonce>.<mac>`,
 * the MAC an HMAC under the instance secret and a hash of the admin token. Signed, so every
 * `notify serve` process and worker sharing the secret accepts it with no session store and no
 * migration; bound to the token, so changing `adminToken` signs every browser out; short-lived,
 * because a signed session cannot be revoked one by one: signing out deletes it from the browser.
 */
export const SESSION_COOKIE = 'notify_admin_auth';
export const SESSION_HOURS = 12;
const SHAPE = /^([0-9]{13})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export interface SessionKeys {
  secret: string;
  token: string;
}

export function startSession(c: HonoContext, keys: SessionKeys, now: number): void {
  const body = `${now + SESSION_HOURS * 3_600_000}.${newToken()}`;
  setCookie(c, SESSION_COOKIE, `${body}.${mac(keys, body)}`, { ...cookieOptions(c), maxAge: SESSION_HOURS * 3600 });
}

export function hasSession(c: HonoContext, keys: SessionKeys, now: number): boolean {
  const m = SHAPE.exec(getCookie(c, SESSION_COOKIE) ?? '');
  if (!m || Number(m[1]) <= now) return false;
  const want = Buffer.from(mac(keys, `${m[1]}.${m[2]}`));
  const got = Buffer.from(m[3]);
  return got.length === want.length && timingSafeEqual(got, want);
}

export function endSession(c: HonoContext): void {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c));
}

function mac({ secret, token }: SessionKeys, body: string): string {
  const tokenHash = createHash('sha256').update(token, 'utf8').digest('base64url');
  return createHmac('sha256', secret).update(`admin-session:${tokenHash}:${body}`).digest('base64url');
}
