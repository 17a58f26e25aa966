import type { Context as HonoContext } from 'hono';
import type { Views } from '../../render/views.ts';
import { PAGE_HEADERS } from '../page.ts';

/** The admin pages frame their own outbox viewer (frame-src 'self'); otherwise the controller's page headers. */
export const ADMIN_HEADERS: Record<string, string> = {
  ...PAGE_HEADERS,
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Robots-Tag': 'noindex',
};

export async function adminPage(c: HonoContext, views: Views, view: string, data: Record<string, unknown>, status = 200): Promise<Response> {
  const html = await views.render(`notify/admin/${view}`, data);
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
