import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { scopeSignature } from '../../src/core/link-refs.ts';
import { hmac } from '../../src/core/tokens.ts';

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

test('link signatures stay what earlier emails carry (a click on a link sent before this version verifies)', () => {
  const secret = 'a-secret-of-the-usual-length-000000000000';
  for (const [token, scope] of [['AbCdEfGhIjKlMnOpQrStUv', 'c1'], ['zzzzzzzzzzzzzzzzzzzzzz', 's42'], ['0123456789_-0123456789', 'm123456']]) {
    assert.equal(scopeSignature(secret, token, scope), reference(secret, `${token}:${scope}`, 12));
    assert.equal(scopeSignature(secret, token, scope).length, 16);
  }
});
