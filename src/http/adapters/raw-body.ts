import type { IncomingMessage } from 'node:http';

/**
 * Frameworks with body parsers read the request stream before notify sees it. @hono/node-server
 * takes the body from `req.rawBody` (a Buffer) when present, so the adapters put the exact bytes
 * there. Webhook signatures (SendGrid, custom HMAC drivers) are computed over those bytes.
 */
export type RawBodyRequest = IncomingMessage & { rawBody?: unknown; body?: unknown; _body?: unknown; originalUrl?: string };

/**
 * For `express.json({ verify: keepRawBody })` (and urlencoded/text/raw): keeps the bytes the
 * parser read, so notify still gets them when it is mounted after your body parsers.
 */
export function keepRawBody(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  (req as RawBodyRequest).rawBody = buf;
}

export type RawBody = { bytes: Buffer; exact: boolean } | { bytes: undefined; exact: false; consumed: boolean };

/**
 * The request body as far as it can be recovered: exact bytes (rawBody, a Buffer or string body),
 * a re-encoding of a parsed JSON or urlencoded object (not byte-exact), or nothing.
 */
export function recoverBody(req: RawBodyRequest): RawBody {
  if (Buffer.isBuffer(req.rawBody)) return { bytes: req.rawBody, exact: true };
  const consumed = req._body === true || req.readableEnded;
  if (!consumed) return { bytes: undefined, exact: false, consumed: false };
  if (Buffer.isBuffer(req.body)) return { bytes: req.body, exact: true };
  if (typeof req.body === 'string') return { bytes: Buffer.from(req.body), exact: true };
  const type = String(req.headers['content-type'] ?? '');
  if (req.body && typeof req.body === 'object') {
    if (/json/i.test(type)) return { bytes: Buffer.from(JSON.stringify(req.body)), exact: false };
    if (/x-www-form-urlencoded/i.test(type)) return { bytes: Buffer.from(urlencode(req.body as Record<string, unknown>)), exact: false };
  }
  return { bytes: undefined, exact: false, consumed: true };
}

function urlencode(body: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, typeof item === 'string' ? item : JSON.stringify(item));
  return params.toString();
}
