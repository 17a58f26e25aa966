import { NotifyError } from '../errors.ts';

// Pragmatic address check: one @, no spaces or control characters, a dotted domain. Deliverability is the
// provider's job; this stops garbage and header injection before anything is stored or sent.
const ADDRESS = /^[^\s@<>()[\]\\,;:"\u0000-\u001f\u007f]+@[A-Za-z0-9\u00a1-\uffff](?:[A-Za-z0-9\u00a1-\uffff-]{0,62}[A-Za-z0-9\u00a1-\uffff])?(?:\.[A-Za-z0-9\u00a1-\uffff](?:[A-Za-z0-9\u00a1-\uffff-]{0,62}[A-Za-z0-9\u00a1-\uffff])?)+$/;

export function isValidEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && ADDRESS.test(value) && value.indexOf('@') <= 64;
}

/** Trimmed address, or a NotifyError INVALID_EMAIL naming the value. */
export function normalizeEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim() : value;
  if (!isValidEmail(email)) throw new NotifyError('INVALID_EMAIL', `Invalid email address: ${JSON.stringify(value)}`, { email: value });
  return email;
}

/** The key for case-insensitive uniqueness and lookups. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}
