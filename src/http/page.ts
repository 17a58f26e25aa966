import type { Context as HonoContext } from 'hono';

/**
 * Headers every HTML page of the controller sends: no scripts, no framing, no referrer leak of the
 * token in the URL, no caching of personal pages. `style-src 'unsafe-inline'` allows the inline <style>
 * of the shipped views; form-action 'self' keeps the confirm button posting here.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

export function htmlPage(c: HonoContext, html: string, status = 200, extra: Record<string, string> = {}): Response {
  return c.body(html, status as 200, { ...PAGE_HEADERS, ...extra });
}
