import type { Context as HonoContext } from 'hono';
import type { ClickTarget } from '../core/click-resolver.ts';
import type { RouteModule } from './app.ts';
import { clientIp } from './client-ip.ts';
import { header } from './request.ts';
import { clickEvent, redirectHeaders } from './tracking-events.ts';
import { viewPage } from './view-page.ts';

/**
 * GET /notify/click/<token>?l=<scope>.<index>.<sig>: 302 to the URL the service put in that
 * email, and a click event. Anything else (unknown token, tampered or foreign reference, index
 * out of range, a non-http(s) destination) is a 404 page and never a redirect. The handler stays
 * synchronous when the scope's links are cached, so a click costs no query and no extra tick.
 */
export const clickRoute: RouteModule = (app, parts) => {
  const { ctx, recorder } = parts;
  const resolve = parts.services.clicks;

  const respond = (c: HonoContext, token: string, target: ClickTarget | undefined): Response | Promise<Response> => {
    if (!target) return viewPage(c, parts, 'link_invalid', {}, 404);
    recorder.record(clickEvent(ctx, { token, method: c.req.method, userAgent: header(c, 'user-agent') }, target, () => clientIp(c, ctx.config.trustProxy)));
    return redirect(target.url);
  };

  // One wildcard route: a single match keeps Hono on its synchronous path (see open.ts).
  app.get('/notify/click/*', (c): Response | Promise<Response> => {
    const token = c.req.path.slice(CLICK_PREFIX.length);
    const target = resolve(token, linkParam(c.req.url) ?? c.req.query('l'));
    if (target instanceof Promise) return target.then((t) => respond(c, token, t));
    return respond(c, token, target);
  });
};

export const CLICK_PREFIX = '/notify/click/';

/** `l` straight from the URL string when it is the plain first parameter (what we generate); else undefined. */
export function linkParam(url: string): string | undefined {
  const q = url.indexOf('?l=');
  if (q < 0) return undefined;
  const end = url.indexOf('&', q);
  const value = url.slice(q + 3, end < 0 ? undefined : end);
  return /^[\w.-]*$/.test(value) ? value : undefined;
}

function redirect(url: string): Response {
  // An empty string body (not null) keeps @hono/node-server on its fast path that writes the
  // plain header object as is.
  return new Response('', { status: 302, headers: redirectHeaders(url) });
}

