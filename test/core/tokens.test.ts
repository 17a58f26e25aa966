import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { scopeSignature } from '../../src/core/link-refs.ts';
import { hmac, hmacDigest, readSendUnsubscribeToken, sendUnsubscribeToken } from '../../src/core/tokens.ts';

const reference = (secret: string, data: string, bytes: number) => createHmac('sha256', secret).update(data).digest().subarray(0, bytes).toString('base64url');

test('hmac is HMAC-SHA256 byte for byte: any secret (longer than a block too), any message, any cut', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 150 }), fc.fullUnicodeString({ maxLength: 80 })), fc.oneof(fc.string({ maxLength: 200 }), fc.fullUnicodeString({ maxLength: 60 })), fc.integer({ min: 0, max: 40 }), (secret, data, bytes) => {
      assert.equal(hmac(secret, data, bytes), reference(secret, data, bytes));
      // a second message of the same length reuses the buffers of the first
      assert.equal(hmac(secret, `${data}`, bytes), reference(secret, data, bytes));
    }),
    { numRuns: 2000 },
  );
  assert.equal(hmac('k', 'm'), reference('k', 'm', 32));
});

test('hmac and hmacDigest at every message length around the block edges (55/56 bytes, 64, 119/120) and keys of 63, 64 and 65 bytes', () => {
  for (const secret of ['k'.repeat(63), 'k'.repeat(64), 'k'.repeat(65), '', 'é'.repeat(40)]) {
    for (let length = 0; length <= 200; length++) {
      const data = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(6).slice(0, length);
      assert.equal(hmac(secret, data), reference(secret, data, 32), `secret ${secret.length}, message ${length}`);
      const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 37 + 11) & 255));
      assert.deepEqual(hmacDigest(secret, bytes), createHmac('sha256', secret).update(bytes).digest());
    }
  }
  // a message made of multi-byte characters, then an ASCII one of the same length: the UTF-8 bytes, not the characters, are signed
  assert.equal(hmac('s', '\u{1F600}'.repeat(20)), reference('s', '\u{1F600}'.repeat(20), 32));
  assert.equal(hmac('s', 'x'.repeat(400)), reference('s', 'x'.repeat(400), 32));
  // lone surrogates are written as U+FFFD, as createHmac writes them; a cut beyond the digest is the whole digest
  for (const odd of ['\uD800', 'a\uDC00b', `${'x'.repeat(54)}\uD800`]) assert.equal(hmac('\uDBFF', odd), reference('\uDBFF', odd, 32));
  assert.equal(hmac('s', 'm', 40), reference('s', 'm', 40));
  assert.equal(hmac('s', 'm', 0), '');
});

test('hmacDigest over long and shrinking messages: random bytes up to 5,000 in random order of lengths, against createHmac', () => {
  // the JavaScript hash keeps buffers between calls: a long message followed by shorter ones must not sign leftovers
  fc.assert(
    fc.property(fc.string({ maxLength: 100 }), fc.array(fc.uint8Array({ maxLength: 5000 }), { minLength: 1, maxLength: 6 }), (secret, messages) => {
      for (const bytes of messages) assert.deepEqual(hmacDigest(secret, bytes), createHmac('sha256', secret).update(bytes).digest());
    }),
    { numRuns: 300 },
  );
});

test('link signatures stay what earlier emails carry (a click on a link sent before this version verifies)', () => {
  const secret = 'a-secret-of-the-usual-length-000000000000';
  for (const [token, scope] of [['AbCdEfGhIjKlMnOpQrStUv', 'c1'], ['zzzzzzzzzzzzzzzzzzzzzz', 's42'], ['0123456789_-0123456789', 'm123456']]) {
    assert.equal(scopeSignature(secret, token, scope), reference(secret, `${token}:${scope}`, 12));
    assert.equal(scopeSignature(secret, token, scope).length, 16);
  }
});

test('hmacDigest is HMAC-SHA256 of bytes, byte for byte (binary data, any secret)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 150 }), fc.uint8Array({ maxLength: 200 }), (secret, bytes) => {
      const data = Buffer.from(bytes);
      assert.deepEqual(hmacDigest(secret, data), createHmac('sha256', secret).update(data).digest());
    }),
    { numRuns: 1000 },
  );
});

test("one-click tokens: earlier emails' 28-character ones still read, new ones their 24-character cut (the MAC is createHmac over 'unsubscribe:' and the id)", () => {
  const secret = 'a-secret-of-the-usual-length-000000000000';
  for (const id of [0, 1, 255, 123456789, 2 ** 40 - 1]) {
    const idBytes = Buffer.alloc(5);
    idBytes.writeUIntBE(id, 0, 5);
    const mac = createHmac('sha256', secret).update('unsubscribe:').update(idBytes).digest();
    // earlier emails carry a 128-bit MAC (28 characters): still read; new ones carry its first 104 bits (24)
    const earlier = Buffer.concat([idBytes, mac.subarray(0, 16)]).toString('base64url');
    const token = Buffer.concat([idBytes, mac.subarray(0, 13)]).toString('base64url');
    assert.equal(sendUnsubscribeToken(secret, id), token);
    assert.equal(readSendUnsubscribeToken(secret, token), id);
    assert.equal(readSendUnsubscribeToken(secret, earlier), id);
  }
});
