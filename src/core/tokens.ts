import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

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

/**
 * HMAC-SHA256 (RFC 2104) with the padded keys made once per secret. createHmac builds a stream
 * object and imports the key on every call, which was a sixth of a campaign recipient's render
 * (one signature each) and part of every click; here a call is two one-shot hashes over buffers
 * kept for the next call. The result is createHmac's, byte for byte (test/core/tokens.test.ts).
 */
interface Signer {
  /** key XOR ipad, followed by room for the message: one buffer per message length */
  inner: Map<number, Buffer>;
  ipad: Buffer;
  /** key XOR opad followed by the inner digest */
  outer: Buffer;
}

const BLOCK = 64;
const signers = new Map<string, Signer>();

function signerFor(secret: string): Signer {
  let s = signers.get(secret);
  if (!s) {
    if (signers.size >= 16) signers.clear();
    let key = Buffer.from(secret, 'utf8');
    if (key.length > BLOCK) key = createHash('sha256').update(key).digest();
    const ipad = Buffer.alloc(BLOCK);
    const outer = Buffer.alloc(BLOCK + 32);
    for (let i = 0; i < BLOCK; i++) {
      ipad[i] = (key[i] ?? 0) ^ 0x36;
      outer[i] = (key[i] ?? 0) ^ 0x5c;
    }
    s = { inner: new Map(), ipad, outer };
    signers.set(secret, s);
  }
  return s;
}

/** The first `bytes` bytes of HMAC-SHA256(secret, data), base64url. */
export function hmac(secret: string, data: string, bytes = 32): string {
  const s = signerFor(secret);
  const inner = innerFor(s, Buffer.byteLength(data, 'utf8'));
  inner.write(data, BLOCK, 'utf8');
  hash('sha256', inner, 'buffer').copy(s.outer, BLOCK);
  // whole 3-byte groups are whole base64 characters: the digest's text cut at 4 characters per group
  if (bytes % 3 === 0 && bytes <= 30) return hash('sha256', s.outer, 'base64url').slice(0, (bytes / 3) * 4);
  return hash('sha256', s.outer, 'buffer').subarray(0, bytes).toString('base64url');
}

/** HMAC-SHA256(secret, data), all 32 bytes, through hmac's padded keys (createHmac's bytes, without its stream object). */
export function hmacDigest(secret: string, data: Buffer): Buffer {
  const s = signerFor(secret);
  const inner = innerFor(s, data.length);
  data.copy(inner, BLOCK);
  hash('sha256', inner, 'buffer').copy(s.outer, BLOCK);
  return hash('sha256', s.outer, 'buffer');
}

/** key XOR ipad with room for a message of `length` bytes after it */
function innerFor(s: Signer, length: number): Buffer {
  let inner = s.inner.get(length);
  if (!inner) {
    if (s.inner.size >= 64) s.inner.clear();
    inner = Buffer.allocUnsafe(BLOCK + length);
    s.ipad.copy(inner);
    s.inner.set(length, inner);
  }
  return inner;
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * The one-click unsubscribe token of one send, short so that List-Unsubscribe's URL fits a line
 * unfolded (its readers are to ignore a fold inside the brackets, but not every one may): the send id
 * (5 bytes, big endian) and an HMAC of it truncated to 104 bits, 18 bytes = 24 base64url characters,
 * so `<URL>` fits a line of its own for a host of up to 41. 104 bits
 * keep a forged link out of reach of any guessing over HTTP (RFC 2104 5: at least 80). Tokens of
 * 28 characters (a 128-bit HMAC) that earlier mail carries are read as before. It carries no contact
 * token: a click link shared from the same message (which holds the send token) cannot be turned
 * into it, and the HMAC is checked before anything is looked up.
 */
const SEND_ID_BYTES = 5;
const UNSUBSCRIBE_MAC_BYTES = 13;
export const SEND_UNSUBSCRIBE_TOKEN_LENGTH = 24;
/** 24 characters (18 bytes) or the earlier 28 (21 bytes): whole 3-byte groups, so each has one spelling */
const SEND_UNSUBSCRIBE_PATTERN = /^(?:[A-Za-z0-9_-]{24}|[A-Za-z0-9_-]{28})$/;

const UNSUBSCRIBE_PREFIX = Buffer.from('unsubscribe:', 'latin1');

// every campaign recipient's List-Unsubscribe carries one: a one-shot signer, not a createHmac stream
function unsubscribeMac(secret: string, id: Buffer, bytes: number): Buffer {
  const data = Buffer.allocUnsafe(UNSUBSCRIBE_PREFIX.length + id.length);
  UNSUBSCRIBE_PREFIX.copy(data);
  id.copy(data, UNSUBSCRIBE_PREFIX.length);
  return hmacDigest(secret, data).subarray(0, bytes);
}

/** undefined for an id that does not fit 5 bytes (over a trillion sends): such a send keeps the long link */
export function sendUnsubscribeToken(secret: string, sendId: number): string | undefined {
  if (!Number.isSafeInteger(sendId) || sendId < 0 || sendId >= 2 ** (8 * SEND_ID_BYTES)) return undefined;
  const id = Buffer.alloc(SEND_ID_BYTES);
  id.writeUIntBE(sendId, 0, SEND_ID_BYTES);
  return Buffer.concat([id, unsubscribeMac(secret, id, UNSUBSCRIBE_MAC_BYTES)]).toString('base64url');
}

/** The send id a token made by sendUnsubscribeToken (now or in its earlier 28-character form) names, or undefined when it is malformed or its HMAC does not match. */
export function readSendUnsubscribeToken(secret: string, token: string | undefined | null): number | undefined {
  if (typeof token !== 'string' || !SEND_UNSUBSCRIBE_PATTERN.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  const id = bytes.subarray(0, SEND_ID_BYTES);
  const mac = bytes.subarray(SEND_ID_BYTES);
  return timingSafeEqual(mac, unsubscribeMac(secret, id, mac.length)) ? id.readUIntBE(0, SEND_ID_BYTES) : undefined;
}
