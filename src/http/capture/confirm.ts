import type { Context as HonoContext } from 'hono';
import type { Optin } from '../../core/optin.ts';
import type { Views } from '../../render/views.ts';
import { clientIp } from '../client-ip.ts';
import { htmlPage } from '../page.ts';

/**
 * GET /notify/confirm/<token> shows a page with a button and changes nothing: mail scanners and
 * link previews fetch links, and must not subscribe anyone. The button POSTs to the same URL, and only
 * that confirms. Views: subscribe_confirm, subscribe_confirmed, subscribe_invalid (expired or unknown).
 */
export async function showConfirm(c: HonoContext, optin: Optin, views: Views): Promise<Response> {
  const token = c.req.param('token') ?? '';
  const state = await optin.inspect(token);
  if (state !== 'valid') return invalid(c, views, state);
  return htmlPage(c, await views.render('notify/subscribe_confirm', { action: `/notify/confirm/${token}` }));
}

export async function doConfirm(c: HonoContext, optin: Optin, views: Views, trustProxy: boolean): Promise<Response> {
  const token = c.req.param('token') ?? '';
  const ip = clientIp(c, trustProxy);
  const state = await optin.confirm(token, ip || null);
  if (state !== 'confirmed') return invalid(c, views, state);
  return htmlPage(c, await views.render('notify/subscribe_confirmed', {}));
}

async function invalid(c: HonoContext, views: Views, state: 'invalid' | 'expired'): Promise<Response> {
  return htmlPage(c, await views.render('notify/subscribe_invalid', { expired: state === 'expired' }), state === 'expired' ? 410 : 404);
}
