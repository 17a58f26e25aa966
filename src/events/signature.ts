import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header outgoing webhooks carry: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'Notify-Signature';

const DEFAULT_TOLERANCE_SECONDS = 300;

export function signatureHeader(body: string, secret: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmac(secret, unixSeconds, body)}`;
}

export interface VerifyOptions {
  /** how far the signed time may be from now, either way (default 300: replays older than that fail) */
  toleranceSeconds?: number;
  /** epoch ms; default Date.now() */
  now?: number;
}

/**
 * For receivers: true when `header` signs exactly `body` (the raw request body, before any JSON
 * parsing) with `secret`, at a time within the tolerance. Several v1 values (a secret being rotated)
 * pass when one matches.
 */
export function verify(body: string | Buffer | Uint8Array, header: string | null | undefined, secret: string, options: VerifyOptions = {}): boolean {
  if (typeof header !== 'string' || typeof secret !== 'string' || secret === '') return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  if (!t || !/^[0-9]{1,12}$/.test(t)) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs((options.now ?? Date.now()) / 1000 - Number(t)) > tolerance) return false;
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const expected = Buffer.from(hmac(secret, Number(t), text), 'hex');
  return parts.some(([k, v]) => k === 'v1' && typeof v === 'string' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

function hmac(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}
