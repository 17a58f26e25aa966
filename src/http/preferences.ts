import type { Context as HonoContext } from 'hono';
import { applyPreferences, type PreferencesChoice, type PreferencesResult, readPreferences } from '../core/preferences.ts';
import { maskEmail } from '../core/unsubscribe.ts';
import type { HttpParts, RouteModule } from './app.ts';
import { readCapped } from './read-body.ts';
import { viewPage } from './view-page.ts';

/**
 * GET and POST /notify/preferences/<unsubscribe token>: view `preferences`.
 *
 * - GET shows the person's lists and changes nothing (mail scanners fetch every link).
 * - POST (the page's form, urlencoded) sets each shown list to what was ticked (`list=<id>`,
 *   repeated), or with `notify_action=unsubscribe_all` unsubscribes from everything; it answers
 *   the page itself with `saved`.
 * - Unknown or malformed token: 404 `unsubscribe_invalid`; an erased contact's: 410 `unsubscribe_expired`.
 */
export const preferencesRoute: RouteModule = (app, parts) => {
  app.get('/notify/preferences/:token', async (c) => {
    const found = await readPreferences(parts.ctx, c.req.param('token'));
    if (c.req.method === 'HEAD') return new Response(null, { status: STATUS[found.outcome] });
    return page(c, parts, found, false);
  });
  app.post('/notify/preferences/:token', async (c) => {
    const choice = await readChoice(c.req.raw);
    if (!choice) return c.text('Request body too large', 413);
    return page(c, parts, await applyPreferences(parts.ctx, c.req.param('token'), choice), true);
  });
  app.on(['GET', 'POST'], '/notify/preferences/*', (c) => page(c, parts, { outcome: 'invalid' }, false));
};

const STATUS = { valid: 200, invalid: 404, expired: 410 } as const;
const MAX_BODY = 64 * 1024;
const MAX_LISTS = 1000;

/** The form's fields; anything that is not a list id is ignored. null: the body is too large. */
async function readChoice(req: Request): Promise<PreferencesChoice | null> {
  const body = await readCapped(req, MAX_BODY).catch(() => Buffer.alloc(0));
  if (!body) return null;
  const form = new URLSearchParams(body.toString('utf8'));
  if (form.get('notify_action') === 'unsubscribe_all') return { everything: true };
  const lists = form
    .getAll('list')
    .slice(0, MAX_LISTS)
    .filter((v) => /^[0-9]{1,15}$/.test(v))
    .map(Number);
  return { lists };
}

function page(c: HonoContext, parts: HttpParts, found: PreferencesResult, saved: boolean): Promise<Response> {
  if (found.outcome === 'invalid') return viewPage(c, parts, 'unsubscribe_invalid', {}, 404);
  if (found.outcome === 'expired') return viewPage(c, parts, 'unsubscribe_expired', {}, 410);
  const { contact, lists } = found;
  return viewPage(c, parts, 'preferences', {
    email: maskEmail(contact.email),
    // relative: the form posts back to the host that served it (CSP form-action 'self')
    action: `/notify/preferences/${encodeURIComponent(contact.unsubscribe_token)}`,
    status: contact.status,
    unsubscribed: contact.status === 'unsubscribed',
    undeliverable: contact.status === 'bounced' || contact.status === 'complained',
    lists: lists.map((l) => ({ id: l.id, name: l.name, description: l.description ?? '', subscribed: l.status === 'subscribed' })),
    saved,
  });
}
