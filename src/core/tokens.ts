import { createHash, createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';

/** 128-bit random token, base64url (22 characters). Used for send and unsubscribe tokens. */
export function newToken(): string {
  return randomBytes(16).toString('base64url');
}

/** Tokens we issue are exactly 22 base64url characters; anything else is rejected before any lookup. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export function isWellFormedToken(value: string | undefined | null): value is string {
  return typeof value === 'string' && TOKEN_PATTERN.test(value);
}

/** One-way hash kept in tombstones so an erased contact's token is recognisable but not recoverable. */
export function hashToken(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

// A KeyObject made once per secret: createHmac() then skips copying and importing the key, which is
// a good part of its cost on the click path (one HMAC per click).
const keys = new Map<string, KeyObject>();
function keyFor(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 16) keys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

export function hmac(secret: string, data: string, bytes = 32): string {
  return createHmac('sha256', keyFor(secret)).update(data).digest().subarray(0, bytes).toString('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
