import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BLOCK, type HmacKey, hmacKey, hmacSha256 } from './sha256.ts';

/** 128-bit random token, base64url (22 characters). Used for send and unsubscribe tokens. */
export function newToken(): string {
  return randomBytes(16).toString('base64url');
}

/** n tokens as newToken() makes them, from one random read (a chunk's send rows: not n calls into OpenSSL). */
export function newTokens(n: number): string[] {
  const bytes = randomBytes(16 * n);
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = bytes.toString('base64url', 16 * i, 16 * i + 16);
  return out;
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
 * HMAC-SHA256 (RFC 2104) with the key's padded blocks hashed once per secret (sha256.ts). createHmac
 * builds a stream object and imports the key on every call, and even one-shot hashes of the padded
 * key and message pay two calls into OpenSSL for four blocks: with one signature and one one-click
 * token per campaign recipient, that was a third of a recipient's render. The result is createHmac's,
 * byte for byte (test/core/tokens.test.ts).
 */
const signers = new Map<string, HmacKey>();

function signerFor(secret: string): HmacKey {
  let s = signers.get(secret);
  if (!s) {
    if (signers.size >= 16) signers.clear();
    let key = Buffer.from(secret, 'utf8');
    if (key.length > BLOCK) key = createHash('sha256').update(key).digest();
    s = hmacKey(key);
    signers.set(secret, s);
  }
  return s;
}

/** the message's bytes, reused from one call to the next (a signature is made and read at once) */
let message = Buffer.allocUnsafe(256);
const digest = Buffer.allocUnsafe(32);

/** `data` as UTF-8 into `message`; ASCII (tokens, scopes) without a call into the encoder */
function messageOf(data: string): number {
  if (data.length > message.length) message = Buffer.allocUnsafe(2 * data.length);
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c > 0x7f) {
      const bytes = Buffer.byteLength(data, 'utf8');
      if (bytes > message.length) message = Buffer.allocUnsafe(bytes);
      return message.write(data, 0, 'utf8');
    }
    message[i] = c;
  }
  return data.length;
}

/** The first `bytes` bytes of HMAC-SHA256(secret, data), base64url. */
export function hmac(secret: string, data: string, bytes = 32): string {
  // messageOf may replace `message` with a larger buffer: read it after
  const length = messageOf(data);
  hmacSha256(signerFor(secret), message, length, digest);
  return digest.toString('base64url', 0, Math.max(0, Math.min(bytes, 32)));
}

/** HMAC-SHA256(secret, data), all 32 bytes. */
export function hmacDigest(secret: string, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(32);
  hmacSha256(signerFor(secret), data, data.length, out);
  return out;
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

const UNSUBSCRIBE_PREFIX = 'unsubscribe:';
/** 'unsubscribe:' and the 5-byte id: what the MAC signs, reused from one call to the next */
const unsubscribeData = Buffer.alloc(UNSUBSCRIBE_PREFIX.length + SEND_ID_BYTES);
unsubscribeData.write(UNSUBSCRIBE_PREFIX, 0, 'latin1');

/** the MAC of the id in unsubscribeData, its first `bytes` bytes written into `out` at `at` */
function unsubscribeMac(secret: string, bytes: number, out: Buffer, at: number): void {
  hmacSha256(signerFor(secret), unsubscribeData, unsubscribeData.length, digest);
  digest.copy(out, at, 0, bytes);
}

/** undefined for an id that does not fit 5 bytes (over a trillion sends): such a send keeps the long link */
export function sendUnsubscribeToken(secret: string, sendId: number): string | undefined {
  if (!Number.isSafeInteger(sendId) || sendId < 0 || sendId >= 2 ** (8 * SEND_ID_BYTES)) return undefined;
  const token = Buffer.allocUnsafe(SEND_ID_BYTES + UNSUBSCRIBE_MAC_BYTES);
  token.writeUIntBE(sendId, 0, SEND_ID_BYTES);
  unsubscribeData.writeUIntBE(sendId, UNSUBSCRIBE_PREFIX.length, SEND_ID_BYTES);
  unsubscribeMac(secret, UNSUBSCRIBE_MAC_BYTES, token, SEND_ID_BYTES);
  return token.toString('base64url');
}

/** The send id a token made by sendUnsubscribeToken (now or in its earlier 28-character form) names, or undefined when it is malformed or its HMAC does not match. */
export function readSendUnsubscribeToken(secret: string, token: string | undefined | null): number | undefined {
  if (typeof token !== 'string' || !SEND_UNSUBSCRIBE_PATTERN.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  const id = bytes.subarray(0, SEND_ID_BYTES);
  const mac = bytes.subarray(SEND_ID_BYTES);
  const expected = Buffer.allocUnsafe(mac.length);
  unsubscribeData.set(id, UNSUBSCRIBE_PREFIX.length);
  unsubscribeMac(secret, mac.length, expected, 0);
  return timingSafeEqual(mac, expected) ? id.readUIntBE(0, SEND_ID_BYTES) : undefined;
}
