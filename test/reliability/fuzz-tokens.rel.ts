import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { LINK_SIG_BYTES, linkRef, parseLinkRef, scopeSignature, verifyLinkRef } from '../../src/core/link-refs.ts';
import { isWellFormedToken, newToken } from '../../src/core/tokens.ts';
import type { Notify } from '../../src/notify.ts';
import { createNotify } from '../../src/notify.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { asPath, assertSafeResponse, encodeSegment, fuzzParams, hostileOrHuge, hostileString } from './helpers/fuzz.ts';

const SECRET = 'fuzz-secret';

// The grammar, written out again without the parsers' regular expressions, so a property can say
// what must be accepted instead of comparing a parser with itself.
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGITS = '0123456789';
const only = (s: string, alphabet: string) => [...s].every((c) => alphabet.includes(c));
const isTokenShape = (v: unknown) => typeof v === 'string' && v.length === 22 && only(v, B64URL);
function refParts(v: unknown): { scope: string; index: number; sig: string } | undefined {
  if (typeof v !== 'string') return undefined;
  const parts = v.split('.');
  if (parts.length !== 3) return undefined;
  const [scope, index, sig] = parts;
  const ok = 'csm'.includes(scope[0] ?? '-') && scope.length >= 2 && scope.length <= 16 && only(scope.slice(1), DIGITS) && index.length >= 1 && index.length <= 4 && only(index, DIGITS) && sig.length === 16 && only(sig, B64URL);
  return ok ? { scope, index: Number(index), sig } : undefined;
}

const chars = (alphabet: string, minLength: number, maxLength: number) => fc.stringOf(fc.constantFrom(...alphabet), { minLength, maxLength });
/** Any character a token or reference may not hold (dots too: they split a reference). */
const foreignChar = fc.oneof(fc.char(), fc.fullUnicode(), fc.constantFrom('.', '=', '+', '/', ' ', '\n', '\u0000', '%')).filter((c) => !B64URL.includes(c));
/** A token of the shape we issue, built so that it must be accepted. */
const validToken = chars(B64URL, 22, 22);
/** A reference as linkRef writes it (canonical index: no leading zeros), built so that it must parse. */
const validRef = fc.record({
  scope: fc.tuple(fc.constantFrom('c', 's', 'm'), chars(DIGITS, 1, 15)).map(([k, n]) => k + n),
  index: fc.integer({ min: 0, max: 9999 }),
  sig: chars(B64URL, 16, 16),
});
const insertAt = (s: string, pos: number, piece: string) => s.slice(0, pos % (s.length + 1)) + piece + s.slice(pos % (s.length + 1));

/** A valid reference broken in one way, each of which the grammar forbids. */
const brokenRef = fc.tuple(validRef, fc.nat(), foreignChar, fc.constantFrom(...'abdefghijklnopqrtuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-')).chain(([r, pos, bad, letter]) => {
  const idx = String(r.index);
  const num = r.scope.slice(1);
  return fc.constantFrom(
    linkRef(letter + num, r.index, r.sig), // unknown scope kind
    linkRef(r.scope[0], r.index, r.sig), // scope without a number
    linkRef(r.scope[0] + '1'.repeat(16), r.index, r.sig), // scope number too long
    `${r.scope}..${r.sig}`, // empty index
    `${r.scope}.${idx.padStart(5, '1')}.${r.sig}`, // index of five digits
    `${r.scope}.-${idx}.${r.sig}`, // negative index
    linkRef(r.scope, r.index, r.sig.slice(1)), // signature one short
    linkRef(r.scope, r.index, r.sig + r.sig[0]), // signature one long
    linkRef(r.scope, r.index, insertAt(r.sig.slice(1), pos, bad)), // a foreign character in the signature
    linkRef(r.scope[0] + insertAt(num, pos, bad), r.index, r.sig), // a foreign character in the scope
    `${r.scope}.${r.index}`, // no signature
    `${linkRef(r.scope, r.index, r.sig)}.${idx}`, // a fourth part
    `${linkRef(r.scope, r.index, r.sig)}\n`, // trailing newline
    ` ${linkRef(r.scope, r.index, r.sig)}`, // leading space
    `${r.scope}.${r.index}${bad}.${r.sig}`, // a foreign character in the index
  );
});

describe('token and link reference parsing under fuzzing', () => {
  test('isWellFormedToken accepts every 22-character base64url token, issued or generated', () => {
    fc.assert(
      fc.property(validToken, (t) => {
        assert.ok(isWellFormedToken(t), t);
      }),
      fuzzParams(),
    );
    fc.assert(fc.property(fc.constant(0), () => assert.ok(isWellFormedToken(newToken()))), fuzzParams(50));
  });

  test('isWellFormedToken rejects a token one character short or long, or with one foreign character, and non-strings', () => {
    fc.assert(
      fc.property(validToken, fc.nat(), foreignChar, fc.constantFrom('short', 'long', 'foreign', 'nonString'), fc.anything(), (t, pos, bad, how, other) => {
        const broken = { short: t.slice(1), long: t + t[0], foreign: insertAt(t.slice(1), pos, bad), nonString: typeof other === 'string' ? 22 : other }[how];
        assert.equal(isWellFormedToken(broken as string), false, JSON.stringify(broken));
      }),
      fuzzParams(),
    );
  });

  test('isWellFormedToken never throws and agrees with the written-out grammar on hostile input', () => {
    fc.assert(
      fc.property(fc.oneof(hostileOrHuge(), fc.anything(), validToken), (v) => {
        assert.equal(isWellFormedToken(v as string), isTokenShape(v));
      }),
      fuzzParams(),
    );
  });

  test('every reference linkRef writes parses back to its scope, index and signature', () => {
    fc.assert(
      fc.property(validRef, ({ scope, index, sig }) => {
        const ref = linkRef(scope, index, sig);
        assert.deepEqual(parseLinkRef(ref), { scope, index, sig });
      }),
      fuzzParams(),
    );
  });

  test('a reference broken in any one way does not parse', () => {
    // The scope kinds are few: every other character is tried, not sampled.
    for (const kind of B64URL.replace(/[csm]/g, '')) assert.equal(parseLinkRef(linkRef(`${kind}1`, 0, 'A'.repeat(16))), undefined, kind);
    fc.assert(
      fc.property(brokenRef, (ref) => {
        assert.equal(parseLinkRef(ref), undefined, JSON.stringify(ref));
      }),
      fuzzParams(),
    );
  });

  test('parseLinkRef never throws and agrees with the written-out grammar on hostile input', () => {
    const nearRef = fc.tuple(validRef, hostileString(8), fc.nat()).map(([r, s, pos]) => insertAt(linkRef(r.scope, r.index, r.sig), pos, s));
    fc.assert(
      fc.property(fc.oneof(hostileOrHuge(), fc.anything(), nearRef), (v) => {
        assert.deepEqual(parseLinkRef(v as string), refParts(v));
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
        const c = B64URL[(B64URL.indexOf(parsed.sig[i]) + 1 + (flip % 63)) % 64];
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
