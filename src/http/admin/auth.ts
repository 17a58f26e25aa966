import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
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

/** Every /notify/admin request passes here first: 401 with a Basic challenge unless the token matches. */
export function requireAdminToken(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (isAuthorized(c.req.header('authorization'), token)) return next();
    return c.body('<!doctype html><title>401</title><p>The notify admin pages need the admin token.</p>', 401, {
      ...PAGE_HEADERS,
      'WWW-Authenticate': CHALLENGE,
    });
  };
}
