import { request } from 'node:http';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import type { Notify } from '../../src/notify.ts';
import { call } from '../helpers/http.ts';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  cookies: string[];
}

/**
 * POSTs over a real socket from a chosen loopback source address (127.0.0.2, ...), so the server
 * sees distinct client IPs exactly as it would in production.
 */
export function postFrom(url: string, body: string, opts: { from?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress: opts.from ?? '127.0.0.1',
        agent: false, // one connection per post: no keep-alive socket outlives the test
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const setCookie = res.headers['set-cookie'] ?? [];
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), cookies: setCookie });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const AJAX = { accept: 'application/json' };

/** In-process form post (no socket). */
export function capture(notify: Notify, body: string | FormData | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  const h: Record<string, string> = body instanceof FormData ? headers : { 'content-type': 'application/x-www-form-urlencoded', ...headers };
  return call(notify, '/notify/capture', { method: 'POST', body: body as BodyInit, headers: h });
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** The value of cookie `name` in Set-Cookie headers, decoded as the flash JSON array. */
export function flashOf(setCookies: string[], name: string): string[] | undefined {
  const line = setCookies.find((c) => c.startsWith(`${name}=`) && !/Max-Age=0/.test(c));
  if (!line) return undefined;
  return JSON.parse(decodeURIComponent(line.slice(name.length + 1).split(';')[0]));
}

/** An application-supplied Mailer (the contract's "any object") that keeps what it was given. */
export function recordingMailer(): Mailer & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    name: 'recording',
    sent,
    async send(message) {
      sent.push(message);
      return { messageId: `<${sent.length}@test>` };
    },
  };
}

/** The confirmation link in a message's text part (an OutgoingMessage, or a mail parsed off the wire). */
export function confirmLink(message: { text?: string }): string {
  const m = /https?:\/\/\S+\/notify\/confirm\/[A-Za-z0-9_-]{22}/.exec(message.text ?? '');
  if (!m) throw new Error(`no confirmation link in ${message.text}`);
  return m[0];
}
