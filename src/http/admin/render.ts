import type { Context as HonoContext } from 'hono';
import type { Views } from '../../render/views.ts';
import { getCookie } from 'hono/cookie';
import { PAGE_HEADERS } from '../page.ts';
import { pageCsrf } from './csrf.ts';
import { SESSION_COOKIE } from './session.ts';

/** The admin pages frame their own outbox viewer and previews (frame-src 'self') and load the console's one script from this server; otherwise the controller's page headers. */
export const ADMIN_HEADERS: Record<string, string> = {
  ...PAGE_HEADERS,
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Robots-Tag': 'noindex',
};

/**
 * An email's HTML (an outbox message, a preview) is served as its own sandboxed document: no
 * scripts, an opaque origin (it cannot read the admin pages), framed only by the admin pages, links
 * opening outside the frame like a mail client. Images may load from anywhere, as in a mail client
 * with images on.
 */
export const MAIL_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; default-src 'none'; img-src * data:; style-src 'unsafe-inline' *; font-src * data:; frame-ancestors 'self'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

export async function adminPage(c: HonoContext, views: Views, view: string, data: Record<string, unknown>, status = 200): Promise<Response> {
  // the layout's sign-out form needs the page's form token; pages without forms make one here
  const signedIn = getCookie(c, SESSION_COOKIE) !== undefined && c.req.header('authorization') === undefined;
  const html = await views.render(`notify/admin/${view}`, { signedIn, csrf: pageCsrf(c), ...data });
  return c.body(html, status as 200, ADMIN_HEADERS);
}

export function notFound(c: HonoContext, views: Views, message: string): Promise<Response> {
  return adminPage(c, views, 'not_found', { title: 'Not found', message }, 404);
}

/** `2026-01-01 09:00 UTC` */
export function fmtDate(d: Date | null | undefined): string {
  if (!d || Number.isNaN(d.getTime())) return '';
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function fmtRate(r: number | null): string {
  return r === null ? '–' : `${(r * 100).toFixed(r < 0.1 ? 1 : 0)}%`;
}

/** page=N from the query, 1-based, bounded */
export function pageParam(value: string | undefined): number {
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 1 && n <= 100_000 ? n : 1;
}
