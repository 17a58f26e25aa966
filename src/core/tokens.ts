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

/**
 * The one-click unsubscribe token of one send, short enough that `List-Unsubscribe: <URL>` folds to
 * lines within 78 characters for a base URL of up to 37 characters: the send id (5 bytes, big
 * endian) and an HMAC of it truncated to 128 bits, 21 bytes = 28 base64url characters. It carries
 * no contact token: a click link shared from the same message (which holds the send token) cannot
 * be turned into it, and the HMAC is checked before anything is looked up.
 */
const SEND_ID_BYTES = 5;
const UNSUBSCRIBE_MAC_BYTES = 16;
export const SEND_UNSUBSCRIBE_TOKEN_LENGTH = 28;
const SEND_UNSUBSCRIBE_PATTERN = /^[A-Za-z0-9_-]{28}$/;

function unsubscribeMac(secret: string, id: Buffer): Buffer {
  return createHmac('sha256', keyFor(secret)).update('unsubscribe:').update(id).digest().subarray(0, UNSUBSCRIBE_MAC_BYTES);
}

/** undefined for an id that does not fit 5 bytes (over a trillion sends): such a send keeps the long link */
export function sendUnsubscribeToken(secret: string, sendId: number): string | undefined {
  if (!Number.isSafeInteger(sendId) || sendId < 0 || sendId >= 2 ** (8 * SEND_ID_BYTES)) return undefined;
  const id = Buffer.alloc(SEND_ID_BYTES);
  id.writeUIntBE(sendId, 0, SEND_ID_BYTES);
  return Buffer.concat([id, unsubscribeMac(secret, id)]).toString('base64url');
}

/** The send id a token made by sendUnsubscribeToken names, or undefined when it is malformed or its HMAC does not match. */
export function readSendUnsubscribeToken(secret: string, token: string | undefined | null): number | undefined {
  if (typeof token !== 'string' || !SEND_UNSUBSCRIBE_PATTERN.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  const id = bytes.subarray(0, SEND_ID_BYTES);
  // 28 characters hold 168 bits exactly, so no two spellings decode to the same bytes
  return timingSafeEqual(bytes.subarray(SEND_ID_BYTES), unsubscribeMac(secret, id)) ? id.readUIntBE(0, SEND_ID_BYTES) : undefined;
}
