import type { WebhookRequest } from './contract.ts';

const parsed = new WeakMap<WebhookRequest, unknown>();

/** The body as JSON, parsed once per request; undefined when it is not JSON. */
export function jsonBody(request: WebhookRequest): unknown {
  if (parsed.has(request)) return parsed.get(request);
  let value: unknown;
  try {
    value = JSON.parse(request.text);
  } catch {
    value = undefined;
  }
  parsed.set(request, value);
  return value;
}

/** What the built-in drivers accept: the route's WebhookRequest, or a web-standard Request (used directly). */
export type IncomingWebhook = WebhookRequest | Request;

const fromRequests = new WeakMap<Request, Promise<WebhookRequest>>();

/** A Request's body is read once (from a clone: the caller can still read it) and shared by every method. */
export function webhookRequestOf(request: IncomingWebhook): WebhookRequest | Promise<WebhookRequest> {
  if (!(request instanceof Request)) return request;
  let pending = fromRequests.get(request);
  if (!pending) {
    pending = request
      .clone()
      .arrayBuffer()
      .catch(() => new ArrayBuffer(0))
      .then((buf) => {
        const body = Buffer.from(buf);
        return { method: request.method, url: request.url, headers: request.headers, body, text: body.toString('utf8') };
      });
    fromRequests.set(request, pending);
  }
  return pending;
}

/** Runs `fn` on the request now (a WebhookRequest: synchronous answer) or once a Request's body is read. */
export function withRequest<T>(request: IncomingWebhook, fn: (r: WebhookRequest) => T): T | Promise<T> {
  const r = webhookRequestOf(request);
  return r instanceof Promise ? r.then(fn) : fn(r);
}
