import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context as HonoContext, MiddlewareHandler } from 'hono';
import { PAGE_HEADERS } from '../page.ts';

/**
 * The admin pages accept the token as `Authorization: Bearer <token>` (scripts) or as the password
 * of HTTP Basic auth with any user name (browsers prompt for it). Both sides are hashed before the
 * constant-time comparison, so neither the content nor the length of the token leaks through timing.
 */
export function presentedToken(header: string | undefined): string | undefined {
  if (!header || header.length > 4096) return undefined;
  const m = /^(Bearer|Basic)[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  if (!m) return undefined;
  if (m[1].toLowerCase() === 'bearer') return m[2];
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(m[2])) return undefined;
  const decoded = Buffer.from(m[2], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

export function tokenMatches(presented: string | undefined, token: string): boolean {
  if (presented === undefined || token === '') return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(token));
}

export function isAuthorized(header: string | undefined, token: string): boolean {
  return tokenMatches(presentedToken(header), token);
}

const CHALLENGE = 'Basic realm="notify admin", charset="UTF-8"';
export const SIGN_IN_PATH = '/notify/admin/sign-in';
/** the console's script holds nothing secret, and the sign-in page loads it before anyone is signed in */
export const SCRIPT_PATH = '/notify/admin/console.js';
const PUBLIC_PATHS = new Set([SIGN_IN_PATH, SCRIPT_PATH]);
/** asks the browser for HTTP Basic credentials (its password prompt) instead of the sign-in form */
export const BASIC_SIGN_IN_PATH = '/notify/admin/sign-in/basic';

/**
 * Every /notify/admin request passes here first. A request with an Authorization header is judged
 * by it alone (scripts, and browsers set up for Basic auth); without one, the console's session
 * cookie lets it in. Otherwise a browser opening a page is sent to the sign-in page, and anything
 * else gets 401 with a Basic challenge.
 */
export function requireAdmin(token: string, signedIn: (c: HonoContext) => boolean): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (header !== undefined ? isAuthorized(header, token) : signedIn(c)) return next();
    if (header === undefined && PUBLIC_PATHS.has(c.req.path)) return next();
    if (header === undefined && c.req.method === 'GET' && opensPage(c) && c.req.path !== BASIC_SIGN_IN_PATH) {
      const url = new URL(c.req.url);
      return c.redirect(`${SIGN_IN_PATH}?${new URLSearchParams({ next: url.pathname + url.search })}`, 303);
    }
    return c.body('<!doctype html><title>401</title><p>The notify admin pages need the admin token.</p>', 401, {
      ...PAGE_HEADERS,
      'WWW-Authenticate': CHALLENGE,
    });
  };
}

/** a browser's navigation to a page, not a script's call */
function opensPage(c: HonoContext): boolean {
  return c.req.header('sec-fetch-mode') === 'navigate' || /\btext\/html\b/.test(c.req.header('accept') ?? '');
}
