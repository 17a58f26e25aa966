import type { Context as HonoContext } from 'hono';
import type { HttpParts } from './app.ts';
import { htmlPage } from './page.ts';

const FALLBACK: Record<number, string> = { 200: 'Done.', 404: 'This link is not valid.', 410: 'This link has expired.' };

/**
 * Renders view `notify/<name>` as a page with the secure page headers (page.ts). Pages reached
 * by a token are never indexed. A broken application override must not turn a completed
 * action into an error page: it is logged and a plain page with the same status is sent.
 */
export async function viewPage(c: HonoContext, { ctx, views }: HttpParts, name: string, data: Record<string, unknown>, status = 200): Promise<Response> {
  const extra = { 'X-Robots-Tag': 'noindex, nofollow' };
  try {
    return htmlPage(c, await views.render(`notify/${name}`, { base_url: ctx.config.baseUrl, ...data }), status, extra);
  } catch (err) {
    ctx.log.error({ err, view: name }, 'view could not be rendered');
    const text = FALLBACK[status] ?? 'Something went wrong.';
    return htmlPage(c, `<!doctype html><meta charset="utf-8"><title>${text}</title><p>${text}</p>`, status, extra);
  }
}
