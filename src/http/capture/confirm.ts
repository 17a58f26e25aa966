import type { Context as HonoContext } from 'hono';
import type { Optin } from '../../core/optin.ts';
import type { HttpParts } from '../app.ts';
import { clientIp } from '../client-ip.ts';
import { viewPage } from '../view-page.ts';

/**
 * GET /notify/confirm/<token> shows a page with a button and changes nothing: mail scanners and
 * link previews fetch links, and must not subscribe anyone. The button POSTs to the same URL, and only
 * that confirms. Views: subscribe_confirm, subscribe_confirmed, subscribe_invalid (unknown 404, expired 410).
 */
export async function showConfirm(c: HonoContext, parts: HttpParts, optin: Optin): Promise<Response> {
  const token = c.req.param('token') ?? '';
  const state = await optin.inspect(token);
  if (state !== 'valid') return invalid(c, parts, state);
  return viewPage(c, parts, 'subscribe_confirm', { action: `/notify/confirm/${token}` });
}

export async function doConfirm(c: HonoContext, parts: HttpParts, optin: Optin): Promise<Response> {
  const token = c.req.param('token') ?? '';
  const ip = clientIp(c, parts.ctx.config.trustProxy);
  const state = await optin.confirm(token, ip || null);
  if (state !== 'confirmed') return invalid(c, parts, state);
  return viewPage(c, parts, 'subscribe_confirmed', {});
}

function invalid(c: HonoContext, parts: HttpParts, state: 'invalid' | 'expired'): Promise<Response> {
  return viewPage(c, parts, 'subscribe_invalid', { expired: state === 'expired' }, state === 'expired' ? 410 : 404);
}
