import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from '../context.ts';
import type { TrackingRecorder } from '../core/tracking-recorder.ts';
import type { ClickResolver } from '../core/click-resolver.ts';
import { isWellFormedToken } from '../core/tokens.ts';
import { CLICK_PREFIX, linkParam } from './click.ts';
import { clientIpFrom } from './client-ip.ts';
import { GIF_HEADERS, OPEN_PREFIX, PIXEL_GIF } from './open.ts';
import { clickEvent, openEvent, redirectHeaders, type TrackingRequest } from './tracking-events.ts';

/**
 * The two hottest requests answered on node:http before Hono builds a Request object for them:
 * an open with a well-formed token, and a click whose link resolves without a query (its
 * message's links are cached). Same answer, same headers, same recorded event as the routes in
 * open.ts and click.ts, which serve notify.fetch and every case this declines (it returns false):
 * another path or method, an odd token, an unknown or tampered link, a click that needs the
 * database (the first of its message, or a link its cached list lacks). Measured by `npm run bench -- pixel` (README, Performance).
 */
export function createTrackingFastPath(ctx: Context, recorder: TrackingRecorder, clicks: ClickResolver): (req: IncomingMessage, res: ServerResponse) => boolean {
  const tracked = (req: IncomingMessage, token: string): TrackingRequest => ({ token, method: req.method!, userAgent: userAgentOf(req.rawHeaders) });
  const ip = (req: IncomingMessage) => () => clientIpFrom(first(req.headers['x-forwarded-for']), req.socket.remoteAddress, ctx.config.trustProxy);

  return (req, res) => {
    const url = req.url;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !url) return false;
    if (url.startsWith(OPEN_PREFIX)) {
      const q = url.indexOf('?');
      const token = url.slice(OPEN_PREFIX.length, q < 0 ? undefined : q);
      if (!isWellFormedToken(token)) return false;
      recorder.record(openEvent(ctx, tracked(req, token)));
      res.writeHead(200, GIF_HEADERS);
      res.end(GIF_BODY);
      return true;
    }
    if (url.startsWith(CLICK_PREFIX)) {
      const q = url.indexOf('?');
      const token = url.slice(CLICK_PREFIX.length, q < 0 ? undefined : q);
      const ref = linkParam(url);
      if (!isWellFormedToken(token) || ref === undefined) return false;
      const target = clicks(token, ref);
      if (target === undefined) return false;
      if (target instanceof Promise) {
        // The route asks again and shares this read; a failure is answered there, not left unhandled.
        target.catch(ignore);
        return false;
      }
      try {
        res.writeHead(302, redirectHeaders(target.url));
      } catch {
        return false; // a destination node:http will not put in a header: the route answers it
      }
      recorder.record(clickEvent(ctx, tracked(req, token), target, ip(req)));
      res.end();
      return true;
    }
    return false;
  };
}

const ignore = () => {};
// a Buffer: the socket would wrap a plain Uint8Array in a new one for every response
const GIF_BODY = Buffer.from(PIXEL_GIF);
const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? v[0] : v) ?? '';

/**
 * The first User-Agent, read from the raw list: node:http builds req.headers on its first read, one
 * property per header a mail client or proxy sent, and an open needs only this one. The first of
 * several, as req.headers keeps it.
 */
function userAgentOf(raw: string[]): string {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 10 && (name === 'User-Agent' || name.toLowerCase() === 'user-agent')) return raw[i + 1];
  }
  return '';
}
