/**
 * HMAC-SHA256 (RFC 2104 over FIPS 180-4) for the short messages notify signs per recipient: a link
 * signature and a one-click token for every message of a campaign. node:crypto has no way to keep
 * a hash's state after the key's padded block, so each HMAC there hashes four blocks and pays two
 * calls into OpenSSL; here the key's two padded blocks are hashed once per secret, and a message
 * under 56 bytes costs two block compressions in JavaScript, about half the time.
 */
const K = Int32Array.from(
  [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ].map((k) => k | 0),
);
const IV = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19].map((v) => v | 0));
export const BLOCK = 64;
const W = new Int32Array(64);

/** One 64-byte block of `bytes` from `at` into the eight words of `h`. */
function compress(h: Int32Array, bytes: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++, at += 4) W[i] = (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
  compressWords(h);
}

/** The block already in W[0..15] into the eight words of `h`. */
function compressWords(h: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15];
    const y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = h[0];
  let b = h[1];
  let c = h[2];
  let d = h[3];
  let e = h[4];
  let f = h[5];
  let g = h[6];
  let k = h[7];
  for (let i = 0; i < 64; i++) {
    const t1 = (k + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    k = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = (h[0] + a) | 0;
  h[1] = (h[1] + b) | 0;
  h[2] = (h[2] + c) | 0;
  h[3] = (h[3] + d) | 0;
  h[4] = (h[4] + e) | 0;
  h[5] = (h[5] + f) | 0;
  h[6] = (h[6] + g) | 0;
  h[7] = (h[7] + k) | 0;
}

/** the padded last block(s) of a message; never the caller's bytes, so a message may be any buffer */
const tail = new Uint8Array(2 * BLOCK);

/** Hashes `length` bytes of `bytes` into `h`, which already holds `prior` bytes (whole blocks), and pads. */
function finish(h: Int32Array, bytes: Uint8Array, length: number, prior: number): void {
  if (length <= BLOCK - 9) {
    // one block (every message notify signs per recipient): loaded as words with its padding
    W.fill(0);
    for (let i = 0; i < length; i++) W[i >> 2] |= bytes[i] << (24 - 8 * (i & 3));
    W[length >> 2] |= 0x80 << (24 - 8 * (length & 3));
    W[15] = (prior + length) * 8;
    compressWords(h);
    return;
  }
  let at = 0;
  for (; at + BLOCK <= length; at += BLOCK) compress(h, bytes, at);
  const rest = length - at;
  for (let i = 0; i < rest; i++) tail[i] = bytes[at + i];
  tail[rest] = 0x80;
  const end = rest + 9 <= BLOCK ? BLOCK : 2 * BLOCK;
  tail.fill(0, rest + 1, end - 8);
  const bits = (prior + length) * 8;
  const high = Math.floor(bits / 2 ** 32);
  writeWord(tail, end - 8, high);
  writeWord(tail, end - 4, bits >>> 0);
  compress(h, tail, 0);
  if (end > BLOCK) compress(h, tail, BLOCK);
}

function writeWord(out: Uint8Array, at: number, v: number): void {
  out[at] = v >>> 24;
  out[at + 1] = v >>> 16;
  out[at + 2] = v >>> 8;
  out[at + 3] = v;
}

/** A key's state after its ipad block and after its opad block (RFC 2104 2). */
export interface HmacKey {
  readonly inner: Int32Array;
  readonly outer: Int32Array;
}

/** `key` at most one block long (RFC 2104: a longer key is hashed first, which the caller does). */
export function hmacKey(key: Uint8Array): HmacKey {
  const pad = (x: number) => {
    const block = new Uint8Array(BLOCK);
    for (let i = 0; i < BLOCK; i++) block[i] = (key[i] ?? 0) ^ x;
    const h = IV.slice();
    compress(h, block, 0);
    return h;
  };
  return { inner: pad(0x36), outer: pad(0x5c) };
}

const state = new Int32Array(8);
/** bits hashed by the outer hash: the opad block and the inner digest */
const OUTER_BITS = (BLOCK + 32) * 8;

/** HMAC-SHA256 of the first `length` bytes of `bytes`, its 32 bytes written into `out`. */
export function hmacSha256(key: HmacKey, bytes: Uint8Array, length: number, out: Uint8Array): void {
  state.set(key.inner);
  finish(state, bytes, length, BLOCK);
  // the outer hash's one block is the inner digest and its padding, loaded as words without bytes
  for (let i = 0; i < 8; i++) W[i] = state[i];
  W[8] = 0x80000000 | 0;
  W.fill(0, 9, 15);
  W[15] = OUTER_BITS;
  state.set(key.outer);
  compressWords(state);
  for (let i = 0; i < 8; i++) writeWord(out, 4 * i, state[i]);
}
