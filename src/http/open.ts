import { isWellFormedToken } from '../core/tokens.ts';
import type { RouteModule } from './app.ts';
import { header } from './request.ts';
import { openEvent } from './tracking-events.ts';

/** 1x1 GIF89a, 43 bytes, its only pixel transparent (graphic control extension). */
export const PIXEL_GIF = Uint8Array.from(Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'));

/** Lower case, as node:http compares names: nothing to fold per response. */
export const GIF_HEADERS = {
  'content-type': 'image/gif',
  'content-length': String(PIXEL_GIF.byteLength),
  'cache-control': 'no-store',
};

/**
 * GET /notify/open/<token>: the same 43-byte GIF whatever the token and whatever the database
 * is doing. Recording is a push into the group-commit buffer (core/tracking-recorder.ts): the response
 * never waits for a write. Malformed tokens are not even buffered; unknown well-formed ones are
 * dropped when the batch resolves its tokens.
 */
export const openRoute: RouteModule = (app, { ctx, recorder }) => {
  // One wildcard route (not `:token` plus a fallback): a single match keeps Hono on its synchronous path.
  app.get('/notify/open/*', (c) => {
    const token = c.req.path.slice(OPEN_PREFIX.length);
    if (isWellFormedToken(token)) recorder.record(openEvent(ctx, { token, method: c.req.method, userAgent: header(c, 'user-agent') }));
    // `/notify/open/`, `/notify/open/<token>.gif`, `/notify/open/a/b`: still the image, nothing recorded.
    return pixel();
  });
};

export const OPEN_PREFIX = '/notify/open/';

/** A fresh Response with a plain header object: @hono/node-server writes it without copying. */
function pixel(): Response {
  return new Response(PIXEL_GIF, { status: 200, headers: GIF_HEADERS });
}
