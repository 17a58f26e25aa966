import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { LINK_SIG_BYTES, linkRef, parseLinkRef, scopeSignature, verifyLinkRef } from '../../src/core/link-refs.ts';
import { isWellFormedToken, newToken, TOKEN_PATTERN } from '../../src/core/tokens.ts';
import type { Notify } from '../../src/notify.ts';
import { createNotify } from '../../src/notify.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { asPath, assertSafeResponse, encodeSegment, fuzzParams, hostileOrHuge, hostileString } from './helpers/fuzz.ts';

const SECRET = 'fuzz-secret';

describe('token and link reference parsing under fuzzing', () => {
  test('isWellFormedToken never throws and accepts exactly 22 base64url characters', () => {
    fc.assert(
      fc.property(fc.oneof(hostileOrHuge(), fc.anything()), (v) => {
        const ok = isWellFormedToken(v as string);
        assert.equal(ok, typeof v === 'string' && TOKEN_PATTERN.test(v));
      }),
      fuzzParams(),
    );
    fc.assert(fc.property(fc.constant(0), () => assert.ok(isWellFormedToken(newToken()))), fuzzParams(50));
  });

  test('parseLinkRef never throws; what it accepts round-trips through linkRef', () => {
    fc.assert(
      fc.property(fc.oneof(hostileOrHuge(), fc.anything()), (v) => {
        const ref = parseLinkRef(v as string);
        if (ref === undefined) return;
        assert.equal(linkRef(ref.scope, ref.index, ref.sig), v);
        assert.ok(Number.isSafeInteger(ref.index) && ref.index >= 0);
      }),
      fuzzParams(),
    );
  });

  test('a signed reference verifies only for its own token and scope; any one-character change fails', () => {
    const scopeArb = fc.tuple(fc.constantFrom('c', 's', 'm'), fc.integer({ min: 1, max: 1e9 })).map(([k, n]) => `${k}${n}`);
    fc.assert(
      fc.property(scopeArb, fc.integer({ min: 0, max: 9999 }), fc.nat(), fc.nat(), (scope, index, pos, flip) => {
        const token = newToken();
        const good = linkRef(scope, index, scopeSignature(SECRET, token, scope));
        const parsed = parseLinkRef(good)!;
        assert.ok(verifyLinkRef(SECRET, token, parsed));
        assert.ok(!verifyLinkRef(SECRET, newToken(), parsed), 'another token');
        assert.ok(!verifyLinkRef('other-secret', token, parsed), 'another secret');
        const i = pos % parsed.sig.length;
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const c = alphabet[(alphabet.indexOf(parsed.sig[i]) + 1 + (flip % 63)) % 64];
        const tampered = { ...parsed, sig: parsed.sig.slice(0, i) + c + parsed.sig.slice(i + 1) };
        assert.ok(!verifyLinkRef(SECRET, token, tampered), 'tampered signature');
        assert.equal(parsed.sig.length, Math.ceil((LINK_SIG_BYTES * 4) / 3));
      }),
      fuzzParams(),
    );
  });
});

describe('tracking and unsubscribe endpoints under fuzzed tokens', () => {
  let notify: Notify;
  let cleanup: () => void;
  before(async () => {
    const db = freshDatabaseUrl('sqlite');
    cleanup = db.cleanup;
    notify = await createNotify(testOptions(db.url, { secret: SECRET }));
  });
  after(async () => {
    await notify.close();
    cleanup();
  });

  const segment = fc.oneof(hostileOrHuge(), fc.constant(newToken()), hostileString().map((s) => newToken().slice(0, 11) + s));

  test('GET /notify/open/<anything>: never a 5xx; the same GIF whatever the token', async () => {
    await fc.assert(
      fc.asyncProperty(segment, fc.boolean(), async (s, raw) => {
        const res = await call(notify, `/notify/open/${asPath(s, raw)}`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), 'image/gif');
        assert.equal((await res.arrayBuffer()).byteLength, 43);
      }),
      fuzzParams(),
    );
  });

  test('GET /notify/click/<anything>?l=<anything>: never a 5xx, never a redirect to a URL it was given', async () => {
    await fc.assert(
      fc.asyncProperty(segment, fc.boolean(), fc.oneof(hostileOrHuge(), fc.constant('c1.0.AAAAAAAAAAAAAAAA')), async (s, raw, l) => {
        const res = await call(notify, `/notify/click/${asPath(s, raw)}?l=${raw ? l.replace(/#/g, '_') : encodeSegment(l)}&url=https%3A%2F%2Fevil.example%2F`, { redirect: 'manual' });
        await assertSafeResponse(res, 'click');
        assert.ok(!(res.status >= 300 && res.status < 400), `unknown token or reference must not redirect (got ${res.status} to ${res.headers.get('location')})`);
      }),
      fuzzParams(),
    );
  });

  test('GET and POST /notify/unsubscribe/<anything>: never a 5xx, never echoes markup', async () => {
    await fc.assert(
      fc.asyncProperty(segment, fc.boolean(), fc.constantFrom('GET', 'POST'), async (s, raw, method) => {
        const res = await call(notify, `/notify/unsubscribe/${asPath(s, raw)}`, { method, body: method === 'POST' ? 'List-Unsubscribe=One-Click' : undefined, headers: method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {} });
        await assertSafeResponse(res, `${method} unsubscribe`);
      }),
      fuzzParams(),
    );
  });
});
