import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { serve } from '../helpers/http.ts';
import { AJAX, capture, flashOf, form, postFrom } from './helpers.ts';

const LIMIT = 3;

forEachEngine('capture rate limit over real sockets', (h) => {
  const notify = useNotify(h, { captureRateLimit: LIMIT });
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve(notify());
  });
  after(() => server.close());
  const url = () => `${server.url}/notify/capture`;
  const referer = () => ({ referer: `${server.url}/signup` });

  test('the (captureRateLimit+1)th post from one IP gets 429 as a form post and as AJAX; another IP passes', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const ok = await postFrom(url(), form({ email: `one${i}@example.com` }), { from: '127.0.0.1', headers: referer() });
      assert.equal(ok.status, 303, `post ${i + 1}`);
    }
    const page = await postFrom(url(), form({ email: 'over@example.com', redirect: '/thanks' }), { from: '127.0.0.1', headers: referer() });
    assert.equal(page.status, 429);
    assert.equal(page.headers.location, '/signup', 'redirected back to the form (Referer before the redirect field on failure)');
    assert.equal(page.headers.refresh, '0; url=/signup');
    assert.match(page.body, /<meta http-equiv="refresh" content="0; url=\/signup">/);
    assert.deepEqual(flashOf(page.cookies, 'notify_errors'), ['Too many sign-ups from your network. Please try again in a minute.']);
    assert.ok(Number(page.headers['retry-after']) >= 1 && Number(page.headers['retry-after']) <= 60);
    const ajax = await postFrom(url(), form({ email: 'over2@example.com' }), { from: '127.0.0.1', headers: AJAX });
    assert.equal(ajax.status, 429);
    assert.equal(ajax.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(ajax.body), { ok: false, code: 'rate_limited', errors: ['Too many sign-ups from your network. Please try again in a minute.'] });
    assert.equal(await notify().contacts.get('over@example.com'), undefined, 'nothing stored over the limit');
    const other = await postFrom(url(), form({ email: 'two@example.com' }), { from: '127.0.0.2', headers: AJAX });
    assert.equal(other.status, 200);
    assert.equal((await notify().contacts.get('two@example.com'))?.status, 'subscribed');
  });

  test('X-Forwarded-For rotation does not bypass the limit with trustProxy false', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 3; i++) {
      const res = await postFrom(url(), form({ email: `xff${i}@example.com` }), { from: '127.0.0.3', headers: { ...AJAX, 'x-forwarded-for': `203.0.113.${i + 1}` } });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
  });

  test('malformed and honeypot posts count too', async () => {
    await postFrom(url(), 'email=%ZZ', { from: '127.0.0.4', headers: AJAX });
    await postFrom(url(), form({ email: 'bot@example.com', notify_hp: 'x' }), { from: '127.0.0.4', headers: AJAX });
    await postFrom(url(), form({ email: 'fine@example.com' }), { from: '127.0.0.4', headers: AJAX });
    assert.equal((await postFrom(url(), form({ email: 'late@example.com' }), { from: '127.0.0.4', headers: AJAX })).status, 429);
  });
});

forEachEngine('capture rate limit behind a trusted proxy', (h) => {
  const notify = useNotify(h, { captureRateLimit: LIMIT, trustProxy: true });
  const post = (xff: string, email: string) => capture(notify(), form({ email }), { ...AJAX, 'x-forwarded-for': xff });

  test('IPv6 clients are limited per /64 and IPv4-mapped addresses count as IPv4', async () => {
    let n = 0;
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:3']) assert.equal((await post(ip, `v6-${n++}@example.com`)).status, 200);
    assert.equal((await post('2001:db8:1:2::99', `v6-${n++}@example.com`)).status, 429, 'same /64');
    assert.equal((await post('2001:db8:1:3::1', `v6-${n++}@example.com`)).status, 200, 'next /64');
    for (const ip of ['::ffff:198.51.100.1', '::ffff:c633:6401', '198.51.100.1']) assert.equal((await post(ip, `v4-${n++}@example.com`)).status, 200);
    assert.equal((await post('198.51.100.1', `v4-${n++}@example.com`)).status, 429);
  });
});

forEachEngine('capture rate limit off', (h) => {
  const notify = useNotify(h, { captureRateLimit: 0 });
  test('captureRateLimit 0 disables the per-IP limit', async () => {
    for (let i = 0; i < 25; i++) assert.equal((await capture(notify(), form({ email: `off${i}@example.com` }), AJAX)).status, 200);
  });
});

forEachEngine('database rate-limit store', (h) => {
  const clock = manualClock();
  let a: Notify;
  let b: Notify;
  before(async () => {
    const opts = { captureRateLimit: LIMIT, rateLimitStore: 'database', trustProxy: true, clock };
    a = await createNotify(testOptions(h.url, opts));
    b = await createNotify(testOptions(h.url, { ...opts, migrate: false }));
  });
  after(async () => {
    await a.close();
    await b.close();
  });
  const post = (n: Notify, email: string) => capture(n, form({ email }), { ...AJAX, 'x-forwarded-for': '192.0.2.10' });

  test('two instances on one database share the limit; a new window starts after a minute', async () => {
    assert.equal((await post(a, 'db1@example.com')).status, 200);
    assert.equal((await post(b, 'db2@example.com')).status, 200);
    assert.equal((await post(a, 'db3@example.com')).status, 200);
    assert.equal((await post(b, 'db4@example.com')).status, 429);
    const res = await post(a, 'db5@example.com');
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '60', 'time stands still on the manual clock');
    clock.advance(60_001);
    assert.equal((await post(b, 'db6@example.com')).status, 200);
    clock.advance(2 * 3600_000);
    assert.equal(await a.context.store.rateLimits.purge(clock.now()), 5, 'ended windows are purged: one IP bucket, four address buckets');
  });

  test('concurrent hits from both instances are all counted', async () => {
    clock.advance(120_000);
    // Honeypot posts: counted, never stored, so only the counter table is written concurrently.
    const body = form({ email: 'con@example.com', notify_hp: 'bot' });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => capture(i % 2 ? a : b, body, { ...AJAX, 'x-forwarded-for': '192.0.2.20' })));
    assert.deepEqual(results.map((r) => r.status).sort(), [...Array(LIMIT).fill(200), ...Array(10 - LIMIT).fill(429)]);
    assert.equal(results.filter((r) => r.status === 200).length, LIMIT);
    assert.equal(results.filter((r) => r.status === 429).length, 10 - LIMIT);
  });
});
