import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { linkRef, scopeSignature } from '../../src/core/link-refs.ts';
import { newToken } from '../../src/core/tokens.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call, serve } from '../helpers/http.ts';
import { clickPath, eventsOf, insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const BROWSER = { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' };
const URLS = ['https://example.com/a?x=1&y=2', 'http://example.org/b#frag', 'https://example.net/ü path'];

async function assertNotFoundPage(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 404, what);
  assert.equal(res.headers.get('location'), null, what);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/, what);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer', what);
  assert.doesNotMatch(await res.text(), /evil/, what);
}

forEachEngine('GET /notify/click', (h) => {
  const clock = manualClock();
  const notify = useNotify(h, { clock });

  test('redirects to the URL of that email, a click event every time, clicked_at on the first only', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    await notify().context.store.links.ensureScope(`c${campaignId}`, URLS, clock.now());
    const send = await insertSend(notify(), { campaignId });
    const first = clock.now();
    for (const [i, expected] of [
      [0, URLS[0]],
      [2, 'https://example.net/%C3%BC%20path'],
      [0, URLS[0]],
    ] as const) {
      const res = await call(notify(), clickPath(notify(), send.token, `c${campaignId}`, i), { headers: BROWSER, redirect: 'manual' });
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), expected);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      clock.advance(1000);
    }
    await notify().flush();
    const events = await eventsOf(notify().context.store, send.id, 'click');
    assert.deepEqual(
      events.map((e) => [e.link_index, e.is_machine, e.metadata]),
      [
        [0, 0, {}],
        [2, 0, {}],
        [0, 0, {}],
      ],
    );
    assert.equal(Number((await sendRow(notify().context.store, send.id)).clicked_at), first);
    const c = await notify().context.store.counters.get(campaignId);
    assert.deepEqual([c.clicked, c.human_clicked, c.opened], [1, 1, 0]);
  });

  test('one-off and drip scopes resolve too', async () => {
    const send = await insertSend(notify());
    await notify().context.store.links.ensureScope(`m${send.id}`, ['https://one.example/'], clock.now());
    await notify().context.store.links.ensureScope('s42', ['https://drip.example/'], clock.now());
    const one = await call(notify(), clickPath(notify(), send.token, `m${send.id}`, 0), { redirect: 'manual' });
    assert.equal(one.headers.get('location'), 'https://one.example/');
    const drip = await call(notify(), clickPath(notify(), send.token, 's42', 0), { redirect: 'manual' });
    assert.equal(drip.headers.get('location'), 'https://drip.example/');
  });

  test('open-redirect matrix: only a URL the service put in that email, else a 404 page', async () => {
    const store = notify().context.store;
    const campaignId = await insertCampaign(store);
    const other = await insertCampaign(store);
    await store.links.ensureScope(`c${campaignId}`, ['https://example.com/ok', 'javascript:alert(1)', '//evil.com/x', 'data:text/html,evil', ' https://evil.com'], clock.now());
    await store.links.ensureScope(`c${other}`, ['https://evil.com/other-campaign'], clock.now());
    const mine = await insertSend(notify(), { campaignId });
    const theirs = await insertSend(notify(), { campaignId: other });
    const secret = notify().context.secret;
    const sig = (token: string, scope: string) => scopeSignature(secret, token, scope);
    const good = linkRef(`c${campaignId}`, 0, sig(mine.token, `c${campaignId}`));
    const cases: [string, string][] = [
      ['no reference', `/notify/click/${mine.token}`],
      ['empty reference', `/notify/click/${mine.token}?l=`],
      ['protocol-relative URL as reference', `/notify/click/${mine.token}?l=//evil.com`],
      ['javascript: as reference', `/notify/click/${mine.token}?l=javascript:alert(1)`],
      ['URL parameter is ignored', `/notify/click/${mine.token}?url=https://evil.com&l=${encodeURIComponent('https://evil.com')}`],
      ['tampered signature', `/notify/click/${mine.token}?l=${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`],
      ['scope swapped to another campaign', `/notify/click/${mine.token}?l=${linkRef(`c${other}`, 0, sig(mine.token, `c${campaignId}`))}`],
      ["another send's link", `/notify/click/${mine.token}?l=${linkRef(`c${other}`, 0, sig(theirs.token, `c${other}`))}`],
      ['unknown token with a copied reference', `/notify/click/${newToken()}?l=${good}`],
      ['malformed token', `/notify/click/not-a-token?l=${good}`],
      ['no token', `/notify/click/?l=${good}`],
      ['extra path segment', `/notify/click/${mine.token}/x?l=${good}`],
      ['index out of range', clickPath(notify(), mine.token, `c${campaignId}`, 99)],
      ['index with leading sign', `/notify/click/${mine.token}?l=c${campaignId}.-1.${sig(mine.token, `c${campaignId}`)}`],
      ['stored javascript: URL', clickPath(notify(), mine.token, `c${campaignId}`, 1)],
      ['stored protocol-relative URL', clickPath(notify(), mine.token, `c${campaignId}`, 2)],
      ['stored data: URL', clickPath(notify(), mine.token, `c${campaignId}`, 3)],
      ['stored URL with leading space', clickPath(notify(), mine.token, `c${campaignId}`, 4)],
      ['scope without links', clickPath(notify(), mine.token, 'c999999', 0)],
    ];
    for (const [what, path] of cases) await assertNotFoundPage(await call(notify(), path, { redirect: 'manual' }), what);
    const ok = await call(notify(), `/notify/click/${mine.token}?l=${good}`, { redirect: 'manual' });
    assert.equal(ok.headers.get('location'), 'https://example.com/ok');
    await notify().flush();
    assert.equal((await eventsOf(store, mine.id, 'click')).length, 1, 'only the valid click is recorded');
    assert.equal((await eventsOf(store, theirs.id, 'click')).length, 0);
  });

  test('a scope is read once: later clicks are served from memory', async () => {
    const store = notify().context.store;
    const campaignId = await insertCampaign(store);
    await store.links.ensureScope(`c${campaignId}`, ['https://cached.example/'], clock.now());
    const send = await insertSend(notify(), { campaignId });
    const path = clickPath(notify(), send.token, `c${campaignId}`, 0);
    assert.equal((await call(notify(), path, { redirect: 'manual' })).status, 302);
    await store.db.deleteFrom('notify_links').where('scope', '=', `c${campaignId}`).execute();
    const again = await call(notify(), path, { redirect: 'manual' });
    assert.equal(again.headers.get('location'), 'https://cached.example/');
  });

  test('scanners are labelled: HEAD, bot user agents, clicks seconds after delivery', async () => {
    const store = notify().context.store;
    const campaignId = await insertCampaign(store);
    await store.links.ensureScope(`c${campaignId}`, ['https://example.com/'], clock.now());
    const fresh = await insertSend(notify(), { campaignId, sentAt: clock.now() - 1000 });
    const path = clickPath(notify(), fresh.token, `c${campaignId}`, 0);
    const head = await call(notify(), path, { method: 'HEAD', headers: BROWSER, redirect: 'manual' });
    assert.equal(head.status, 302);
    await call(notify(), path, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; Barracuda Sentinel)' }, redirect: 'manual' });
    await call(notify(), path, { headers: BROWSER, redirect: 'manual' });
    clock.advance(10_000);
    await call(notify(), path, { headers: BROWSER, redirect: 'manual' });
    await notify().flush();
    assert.deepEqual(
      (await eventsOf(store, fresh.id, 'click')).map((e) => [e.is_machine, e.machine_reason]),
      [
        [1, 'head_request'],
        [1, 'bot_user_agent'],
        [1, 'too_soon_after_delivery'],
        [0, null],
      ],
    );
    const row = await sendRow(store, fresh.id);
    assert.equal(Number(row.human_clicked_at), clock.now());
    const c = await store.counters.get(campaignId);
    assert.deepEqual([c.clicked, c.human_clicked], [1, 1]);
  });
});

forEachEngine('click IP address', (h) => {
  const withIp = useNotify(h, { trackIpAddress: true });
  const withoutIp = useNotify(h, { trackIpAddress: false });
  const proxied = useNotify(h, { trackIpAddress: true, trustProxy: true });

  const clickOver = async (notify: ReturnType<typeof withIp>, headers: Record<string, string> = {}) => {
    const send = await insertSend(notify);
    await notify.context.store.links.ensureScope(`m${send.id}`, ['https://example.com/'], Date.now());
    const srv = await serve(notify);
    try {
      const res = await fetch(`${srv.url}${clickPath(notify, send.token, `m${send.id}`, 0)}`, { redirect: 'manual', headers });
      assert.equal(res.status, 302);
      const open = await fetch(`${srv.url}/notify/open/${send.token}`);
      await open.arrayBuffer();
    } finally {
      await srv.close();
    }
    await notify.flush();
    return [(await eventsOf(notify.context.store, send.id, 'click'))[0].metadata, (await eventsOf(notify.context.store, send.id, 'open'))[0].metadata];
  };

  test('with trackIpAddress the click IP is stored (the socket address; opens never)', async () => {
    assert.deepEqual(await clickOver(withIp(), { 'x-forwarded-for': '203.0.113.9' }), [{ ip: '127.0.0.1' }, {}]);
  });

  test('without trackIpAddress no IP is stored', async () => {
    assert.deepEqual(await clickOver(withoutIp()), [{}, {}]);
  });

  test('with trustProxy the left-most X-Forwarded-For address is used', async () => {
    assert.deepEqual(await clickOver(proxied(), { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' }), [{ ip: '203.0.113.9' }, {}]);
  });
});
