import type { Context as HonoContext } from 'hono';
import { htmlPage } from '../page.ts';
import { escapeHtml } from './html.ts';
import { clearFlashCookie, FLASH_ERRORS, FLASH_SUCCESS, setFlashCookie } from './flash.ts';

/**
 * The two shapes of a capture answer, for a script and for a browser:
 * - AJAX (`Accept: application/json`, an `X-Requested-With` header, or a JSON body): JSON with the status.
 * - a standard form post: success is a 303 back to the page (the `redirect` field, else the
 *   same-site Referer, else `/`) with the `notify_success` flash cookie. A failure keeps its 4xx
 *   status (429 when rate limited) so logs and scripts see it, and still sends the browser back to
 *   the form with the `notify_errors` flash cookie: `Location` and `Refresh` headers plus a
 *   meta-refresh page, which browsers follow whatever the status.
 */
export interface Reply {
  ok(message: string): Response;
  fail(status: number, code: string, messages: string[], retryAfterSec?: number): Response;
}

export interface ReplyTarget {
  json: boolean;
  secure: boolean;
  /** validated same-site paths */
  referer?: string;
  redirect?: string;
}

export function wantsJson(req: Request): boolean {
  const accept = req.headers.get('accept') ?? '';
  const type = req.headers.get('content-type') ?? '';
  return /\bapplication\/json\b/i.test(accept) || req.headers.has('x-requested-with') || /^application\/json\b/i.test(type);
}

export function replier(c: HonoContext, t: ReplyTarget): Reply {
  return {
    ok(message) {
      if (t.json) return c.json({ ok: true, message }, 200, { 'Cache-Control': 'no-store' });
      const to = t.redirect ?? t.referer ?? '/';
      const headers = new Headers({ Location: to, 'Cache-Control': 'no-store' });
      headers.append('Set-Cookie', setFlashCookie(FLASH_SUCCESS, [message], t.secure));
      headers.append('Set-Cookie', clearFlashCookie(FLASH_ERRORS, t.secure));
      return new Response(null, { status: 303, headers });
    },
    fail(status, code, messages, retryAfterSec) {
      const retry: Record<string, string> = retryAfterSec ? { 'Retry-After': String(retryAfterSec) } : {};
      if (t.json) return c.json({ ok: false, code, errors: messages }, status as 400, { 'Cache-Control': 'no-store', ...retry });
      const to = t.referer ?? t.redirect ?? '/';
      const res = htmlPage(c, backPage(to, messages), status, { Location: to, Refresh: `0; url=${to}`, ...retry });
      res.headers.append('Set-Cookie', setFlashCookie(FLASH_ERRORS, messages, t.secure));
      res.headers.append('Set-Cookie', clearFlashCookie(FLASH_SUCCESS, t.secure));
      return res;
    },
  };
}

/** Shown only for the moment before the browser follows the refresh (or when it does not). */
function backPage(to: string, messages: string[]): string {
  const href = escapeHtml(to);
  const items = messages.map((m) => `<li>${escapeHtml(m)}</li>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=${href}"><title>Not subscribed</title></head><body><ul>${items}</ul><p><a href="${href}">Back to the form</a></p></body></html>`;
}
