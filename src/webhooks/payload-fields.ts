import { createHash, timingSafeEqual } from 'node:crypto';
import { isValidEmail } from '../core/email.ts';

/** Providers' payloads arrive untyped: their fields are read through these guards. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Equal strings in time that does not depend on where they differ (digests of both sides are compared). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** `Name <a@b.c>` or `a@b.c` -> `a@b.c`; undefined when it is no address. */
export function addressOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const angle = /<([^<>]+)>\s*$/.exec(value);
  const email = (angle ? angle[1] : value).trim();
  return isValidEmail(email) ? email : undefined;
}
