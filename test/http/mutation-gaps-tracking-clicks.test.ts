import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import type { Logger } from 'pino';
import { type ClickResolver, createClickResolver, safeDestination } from '../../src/core/click-resolver.ts';
import { classifyEngagement, classifyRequest, findLinkBursts } from '../../src/core/engagement.ts';
import { linkRef, scopeSignature } from '../../src/core/link-refs.ts';
import { hmac, newToken } from '../../src/core/tokens.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';

/**
 * Click redirects and their labels: which references resolve to which destination, how many reads of
 * a message's links they cost (the resolver's caches), what a failed read answers, and which clicks
 * count as a person's. test/http/click*.test.ts read the common cases over HTTP.
 */
const secret = 'clicks-gaps-secret';

interface Warn {
  obj: Record<string, unknown>;
  msg: string;
}

forEachEngine('click resolver: reads, caches and refusals', (h) => {
  const store = useStore(h);
  const token = newToken();
  const ref = (scope: string, index: number) => linkRef(scope, index, scopeSignature(secret, token, scope));

  /** a resolver over the real store counting its scope reads; `failAfter` reads succeed, the later ones fail */
  function counted(opts: { maxScopes?: number; failAfter?: number } = {}) {
    const s = store();
    const reads: string[] = [];
    const warnings: Warn[] = [];
    const log = { warn: (obj: Record<string, unknown>, msg: string) => warnings.push({ obj, msg }), error: () => {}, info: () => {} } as unknown as Logger;
    const resolve: ClickResolver = createClickResolver(
      {
        secret,
        log,
        store: {
          ...s,
          links: {
            ...s.links,
            urlsForScope: async (scope: string) => {
              reads.push(scope);
              if (opts.failAfter !== undefined && reads.length > opts.failAfter) throw new Error('links unreadable');
              return s.links.urlsForScope(scope);
            },
          },
        } as Store,
      },
      { maxScopes: opts.maxScopes, refreshMs: 0 },
    );
    return { resolve, reads, warnings };
  }
  const urlOf = async (r: ReturnType<ClickResolver>) => (await r)?.url;

  test('the first clicks of a message, arriving together, share one read of its links', async () => {
    await store().links.ensureScope('c8101', ['https://example.com/a', 'https://example.com/b'], 1);
    const { resolve, reads } = counted();
    const urls = await Promise.all(Array.from({ length: 10 }, (_, i) => urlOf(resolve(token, ref('c8101', i % 2)))));
    assert.deepEqual(urls, Array.from({ length: 10 }, (_, i) => (i % 2 ? 'https://example.com/b' : 'https://example.com/a')));
    assert.deepEqual(reads, ['c8101']);
  });

  test('maxScopes messages are held; past that the oldest is read again', async () => {
    for (const s of ['c8201', 'c8202', 'c8203']) await store().links.ensureScope(s, [`https://example.com/${s}`], 1);
    const { resolve, reads } = counted({ maxScopes: 2 });
    for (const s of ['c8201', 'c8202', 'c8201']) assert.equal(await urlOf(resolve(token, ref(s, 0))), `https://example.com/${s}`);
    assert.deepEqual(reads, ['c8201', 'c8202'], 'two messages fit');
    for (const s of ['c8203', 'c8202', 'c8201']) assert.equal(await urlOf(resolve(token, ref(s, 0))), `https://example.com/${s}`);
    assert.deepEqual(reads, ['c8201', 'c8202', 'c8203', 'c8201'], 'the third pushed out the first read, not the one read after it');
  });

  test('a re-read that fails answers from the links held, and warns with the scope; a first read that fails rejects', async () => {
    await store().links.ensureScope('c8301', ['https://example.com/kept'], 1);
    const { resolve, reads, warnings } = counted({ failAfter: 1 });
    assert.equal(await urlOf(resolve(token, ref('c8301', 0))), 'https://example.com/kept');
    assert.equal(await resolve(token, ref('c8301', 4)), undefined, 'a link it lacks: read again, which fails');
    assert.equal(await urlOf(resolve(token, ref('c8301', 0))), 'https://example.com/kept');
    assert.deepEqual(reads, ['c8301', 'c8301']);
    assert.deepEqual(
      warnings.map((w) => [w.msg, w.obj.scope, (w.obj.err as Error).message]),
      [['could not re-read the links of a message; answering from memory', 'c8301', 'links unreadable']],
    );
    await assert.rejects(async () => resolve(token, ref('c8302', 0)), /links unreadable/);
  });

  test('a message with more than ten links: each index resolves; a reference with anything around it does not', async () => {
    const urls = Array.from({ length: 1001 }, (_, i) => `https://example.com/${i}`);
    await store().links.ensureScope('m8401', urls, 1);
    const { resolve } = counted();
    for (const i of [0, 9, 10, 12, 999, 1000]) assert.equal(await urlOf(resolve(token, ref('m8401', i))), `https://example.com/${i}`);
    for (const bad of [`x${ref('m8401', 1)}`, `${ref('m8401', 1)}x`, ` ${ref('m8401', 1)}`]) assert.equal(await resolve(token, bad), undefined, bad);
  });

  test('a stored link that is no valid http(s) URL is never a destination', async () => {
    await store().links.ensureScope('c8501', ['http://', 'https://[::1', 'https://example.com/ok'], 1);
    const { resolve } = counted();
    assert.equal(await resolve(token, ref('c8501', 0)), undefined);
    assert.equal(await resolve(token, ref('c8501', 1)), undefined);
    assert.equal(await urlOf(resolve(token, ref('c8501', 2))), 'https://example.com/ok');
  });
});

test('safeDestination: absolute http(s) only, normalised; junk that looks like a URL gives the empty text', () => {
  assert.equal(safeDestination('HTTPS://Example.COM/a b'), 'https://example.com/a%20b');
  for (const bad of ['http://', 'https://[::1', 'javascript:alert(1)', '//example.com/', 'ftp://example.com/']) assert.equal(safeDestination(bad), '', bad);
});

test('engagement: which requests are a machine by themselves', () => {
  assert.equal(classifyRequest('GET', 'Mozilla/5.0'), 'apple_mail_privacy');
  assert.equal(classifyRequest('GET', 'Thunderbird Mozilla/5.0'), null, 'only the bare user agent is the Apple proxy');
  assert.equal(classifyRequest('GET', '   '), 'no_user_agent', 'blank is no user agent');
  assert.equal(classifyRequest('GET', ''), 'no_user_agent');
});

test('engagement: an open is never a link burst; a click in one is', () => {
  const base = { method: 'GET', userAgent: 'Mozilla/5.0 (X11) Firefox/126', at: 100_000, sentAt: 0, burst: true };
  assert.deepEqual(classifyEngagement({ ...base, type: 'open' }), { isMachine: false, reason: null });
  assert.deepEqual(classifyEngagement({ ...base, type: 'click' }), { isMachine: true, reason: 'link_burst' });
});

test('link bursts: three different links of one send within 2 s, whatever the order they come in', () => {
  const click = (key: string, link: number | null, at: number) => ({ key, sendId: 1, link, at });
  const sorted = (s: Set<string>) => [...s].sort();
  // out of order: the early click of link 1 is no part of the burst at 10 s
  assert.deepEqual(sorted(findLinkBursts([click('a', 0, 10_000), click('b', 1, 0), click('c', 2, 10_100), click('d', 3, 10_200)])), ['a', 'c', 'd']);
  // exactly 2 s from first to last is still one burst
  assert.deepEqual(sorted(findLinkBursts([click('a', 0, 0), click('b', 1, 1000), click('c', 2, 2000)])), ['a', 'b', 'c']);
  // a click with no link is no link of the burst
  assert.deepEqual(sorted(findLinkBursts([click('a', 0, 0), click('b', 1, 100), click('c', null, 200)])), []);
  // link 0 clicked twice: its first click leaving the window leaves link 0 in it
  assert.deepEqual(sorted(findLinkBursts([click('a', 0, 0), click('b', 0, 1500), click('c', 1, 2500), click('d', 2, 2600)])), ['b', 'c', 'd']);
});

test('hmac: a long message of non-ASCII text signs as createHmac does', () => {
  for (const data of ['é'.repeat(200), `${'a'.repeat(250)}ü`, '😀'.repeat(100)]) {
    assert.equal(hmac('k', data), createHmac('sha256', 'k').update(data, 'utf8').digest('base64url'), data.slice(0, 5));
  }
});
