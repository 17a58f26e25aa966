import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Notify } from '../../notify.ts';
import { type RawBodyRequest, recoverBody } from './raw-body.ts';

export { keepRawBody } from './raw-body.ts';

type Next = (err?: unknown) => void;

/** Paths whose handlers verify a signature over the exact request bytes. */
const NEEDS_EXACT_BYTES = /^\/notify\/webhook(?:[/?]|$)/;

/**
 * Express 5 (or Connect) middleware for the /notify/* controller:
 *
 *   app.use(notifyExpress(notify));            // anywhere; handles /notify/*, passes the rest on
 *   app.use('/notify', notifyExpress(notify)); // also fine: the mount path is restored
 *
 * Best mounted before your body parsers. Mounted after them, it forwards what they kept:
 * `req.rawBody` (pass `verify: keepRawBody` to express.json()/urlencoded()), a Buffer body
 * (express.raw()) or a string body (express.text()) are exact; a parsed JSON or urlencoded object
 * is re-encoded for the form and unsubscribe routes, while the webhook route then answers 500
 * with a message saying how to fix the mounting, rather than failing signatures mysteriously.
 */
export function notifyExpress(notify: Pick<Notify, 'listener' | 'context'>): (req: IncomingMessage, res: ServerResponse, next: Next) => void {
  let warned = false;
  return (req, res, next) => {
    const r = req as RawBodyRequest;
    const url = r.originalUrl ?? r.url ?? '';
    if (!url.startsWith('/notify/')) return next();
    r.url = url;
    const body = recoverBody(r);
    if (body.bytes) {
      if (!body.exact && NEEDS_EXACT_BYTES.test(url)) return refuse(res, notify);
      if (!body.exact && !warned) {
        warned = true;
        notify.context.log.warn('notifyExpress: the body was parsed before notify; re-encoded it. Mount notify before body parsers or use verify: keepRawBody');
      }
      r.rawBody = body.bytes;
    } else if (body.consumed) {
      if (NEEDS_EXACT_BYTES.test(url)) return refuse(res, notify);
      r.rawBody = Buffer.alloc(0);
    }
    notify.listener(r, res);
  };
}

function refuse(res: ServerResponse, notify: Pick<Notify, 'context'>): void {
  const message =
    'notify: a body parser consumed the webhook body before notify. Mount notifyExpress(notify) before your body parsers, or pass { verify: keepRawBody } to them.';
  notify.context.log.error(message);
  res.statusCode = 500;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(message);
}
