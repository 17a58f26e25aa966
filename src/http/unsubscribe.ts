import type { Context as HonoContext } from 'hono';
import { isWellFormedToken } from '../core/tokens.ts';
import { findUnsubscribe, maskEmail, resolveSendUnsubscribe, type UnsubscribeLookup, unsubscribe, unsubscribeList } from '../core/unsubscribe.ts';
import type { HttpParts, RouteModule } from './app.ts';
import { readCapped } from './read-body.ts';
import { viewPage } from './view-page.ts';

/**
 * GET and POST /notify/unsubscribe/<token>[?s=<sendToken>], and /notify/u/<send unsubscribe token>
 * (the short form List-Unsubscribe carries), which runs the same flow.
 *
 * - GET runs the flow and renders unsubscribe_success (200), or unsubscribe_invalid (404) /
 *   unsubscribe_expired (410). With unsubscribeConfirm, GET only renders unsubscribe_confirm
 *   (a button that POSTs) so link scanners cannot unsubscribe anyone.
 * - POST is RFC 8058 one-click: any body (`List-Unsubscribe=One-Click` urlencoded or multipart,
 *   or none) and no cookie or CSRF token; it answers the page itself, never a redirect.
 * - HEAD answers the status GET would, and never acts.
 * Every answer is idempotent: using the link again shows success and changes nothing.
 */
export const unsubscribeRoute: RouteModule = (app, parts) => {
  const handle = (c: HonoContext, token: string, sendToken: string | undefined) => {
    const method = c.req.method;
    if (method === 'HEAD') return findUnsubscribe(parts.ctx, token).then((found) => new Response(null, { status: STATUS[found.outcome] }));
    if (method === 'GET' && parts.ctx.config.unsubscribeConfirm) return confirmPage(c, parts, token, sendToken);
    if (method === 'POST') return postSource(c.req.raw).then((source) => act(c, parts, token, sendToken, source));
    return act(c, parts, token, sendToken, 'link');
  };
  const long = (c: HonoContext) => handle(c, c.req.param('token') ?? '', c.req.query('s'));
  // The short form of the List-Unsubscribe header (one token naming the send); mail already
  // delivered keeps working through the long form above. A header folded inside its brackets
  // breaks before the token (mail/header-fold.ts); a client that keeps the white space of the fold
  // asks for /notify/u/%20<token>, so white space before the token is dropped, as RFC 2369 2 asks
  // readers to do. Only before it: the HMAC is still checked on the token as written.
  const short = async (c: HonoContext) => {
    const found = await resolveSendUnsubscribe(parts.ctx, c.req.param('token')?.replace(/^\s+/, ''));
    if (found.outcome !== 'valid') return c.req.method === 'HEAD' ? new Response(null, { status: STATUS[found.outcome] }) : outcomePage(c, parts, found);
    return handle(c, found.token, found.sendToken);
  };
  app.get('/notify/unsubscribe/:token', long);
  app.post('/notify/unsubscribe/:token', long);
  app.get('/notify/u/:token', short);
  app.post('/notify/u/:token', short);
  // No token, or extra path segments: the invalid page, nothing looked up.
  for (const path of ['/notify/unsubscribe/*', '/notify/u/*']) {
    app.on(['GET', 'POST'], path, (c) => (c.req.method === 'HEAD' ? new Response(null, { status: 404 }) : outcomePage(c, parts, { outcome: 'invalid' })));
  }
};

const STATUS = { valid: 200, unsubscribed: 200, invalid: 404, expired: 410 } as const;

/**
 * A POST is a mail client's RFC 8058 one-click unless it carries `notify_confirm=1`, the field of
 * our own confirm page (a person pressed the button). Only the first few KiB are looked at;
 * whatever the body, the POST acts.
 */
async function postSource(req: Request): Promise<'link' | 'one-click'> {
  const head = await readCapped(req, 4096).catch(() => null);
  return head && new URLSearchParams(head.toString('latin1')).get('notify_confirm') === '1' ? 'link' : 'one-click';
}

async function act(c: HonoContext, parts: HttpParts, token: string, sendToken: string | undefined, source: 'link' | 'one-click'): Promise<Response> {
  const result = await unsubscribe(parts.ctx, token, { source, sendToken });
  if (result.outcome !== 'unsubscribed') return outcomePage(c, parts, result);
  return viewPage(c, parts, 'unsubscribe_success', { email: maskEmail(result.contact.email), already: !result.changed, list: result.list ?? null, preferences_url: preferencesPath(token) });
}

async function confirmPage(c: HonoContext, parts: HttpParts, token: string, s: string | undefined): Promise<Response> {
  const found = await findUnsubscribe(parts.ctx, token);
  if (found.outcome !== 'valid') return outcomePage(c, parts, found);
  // Relative action: the form posts back to the host that served it (CSP form-action 'self').
  const action = `/notify/unsubscribe/${encodeURIComponent(token)}${isWellFormedToken(s) ? `?s=${s}` : ''}`;
  const list = await unsubscribeList(parts.ctx, found.contact, s);
  const already = list ? !found.contact.lists.includes(list) : found.contact.status === 'unsubscribed';
  return viewPage(c, parts, 'unsubscribe_confirm', { email: maskEmail(found.contact.email), action, already, list: list ?? null, preferences_url: preferencesPath(token) });
}

/** Relative, like the confirm form's action: the page links to the host that served it. */
const preferencesPath = (token: string) => `/notify/preferences/${encodeURIComponent(token)}`;

function outcomePage(c: HonoContext, parts: HttpParts, r: Exclude<UnsubscribeLookup, { outcome: 'valid' }>): Promise<Response> {
  return viewPage(c, parts, r.outcome === 'expired' ? 'unsubscribe_expired' : 'unsubscribe_invalid', {}, STATUS[r.outcome]);
}
