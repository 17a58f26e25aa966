import { X509Certificate } from 'node:crypto';

const CERT_PATH = /^\/SimpleNotificationService-[A-Za-z0-9]{1,64}\.pem$/;
const PEM = /^\s*-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\s*$/;
const MAX_CERT_BYTES = 16 * 1024;

/**
 * Whether `raw` is an SNS signing-certificate URL at `host` (the topic region's SNS host) and
 * nothing else: https, that exact host, no userinfo, port, query or fragment, and the
 * /SimpleNotificationService-<id>.pem path. The URL must already be in canonical form, so
 * encodings, backslashes, upper case or trailing dots that a parser would normalise are refused.
 */
export function isTrustedCertUrl(raw: string, host: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return (
    url.href === raw &&
    url.protocol === 'https:' &&
    url.hostname === host &&
    url.host === host &&
    url.username === '' &&
    url.password === '' &&
    url.port === '' &&
    !raw.includes('?') &&
    !raw.includes('#') &&
    CERT_PATH.test(url.pathname)
  );
}

/**
 * Signing certificates by URL: at most `max` kept (least recently used goes first), concurrent
 * requests for one URL share a fetch, and a failed fetch is never kept, so the next message tries
 * again. Redirects are refused and the answer must be exactly one PEM certificate.
 */
export class SigningCertificates {
  private readonly entries = new Map<string, Promise<X509Certificate>>();

  constructor(
    private readonly fetchFn: typeof fetch,
    private readonly max = 16,
    private readonly timeoutMs = 5000,
  ) {}

  get(url: string): Promise<X509Certificate> {
    const hit = this.entries.get(url);
    if (hit) {
      this.entries.delete(url);
      this.entries.set(url, hit);
      return hit;
    }
    const pending = this.download(url);
    this.entries.set(url, pending);
    pending.catch(() => {
      if (this.entries.get(url) === pending) this.entries.delete(url);
    });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    return pending;
  }

  private async download(url: string): Promise<X509Certificate> {
    const fetchFn = this.fetchFn;
    const res = await fetchFn(url, { redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
    // 'manual' hands a 3xx back (or an opaque redirect): only a direct 200 is a certificate.
    if (res.status !== 200 || res.redirected || res.type === 'opaqueredirect') {
      await res.body?.cancel().catch(() => {});
      throw new Error(`certificate fetch answered ${res.status}${res.redirected ? ' after a redirect' : ''}`);
    }
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > MAX_CERT_BYTES) throw new Error('certificate answer too large');
    const pem = await res.text();
    if (pem.length > MAX_CERT_BYTES || !PEM.test(pem) || pem.split('-----BEGIN').length !== 2) throw new Error('the answer is not exactly one PEM certificate');
    return new X509Certificate(pem);
  }
}
