import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { BURST_WINDOW_MS, classifyEngagement, findLinkBursts } from '../../src/core/engagement.ts';
import { type EngineHandle, forEachEngine, useNotify } from '../helpers/engines.ts';
import { call, serve } from '../helpers/http.ts';
import { clickPath, eventsOf, insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const BROWSER = { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' };
const URLS = ['https://example.com/1', 'https://example.com/2', 'https://example.com/3', 'https://example.com/4'];

test('findLinkBursts: three different links of one send within the window, every click of the window', () => {
  const p = (key: string, sendId: number, link: number | null, at: number) => ({ key, sendId, link, at });
  const burst = findLinkBursts([p('a', 1, 0, 0), p('b', 1, 1, 400), p('c', 1, 2, 900), p('d', 1, 0, 10_000)]);
  assert.deepEqual([...burst].sort(), ['a', 'b', 'c']);
  assert.equal(findLinkBursts([p('a', 1, 0, 0), p('b', 1, 1, 100), p('c', 1, 1, 200), p('d', 1, 0, 300)]).size, 0, 'two links, however fast, are a reader');
  assert.equal(findLinkBursts([p('a', 1, 0, 0), p('b', 1, 1, 1500), p('c', 1, 2, 1500 + BURST_WINDOW_MS)]).size, 0, 'spread over more than the window');
  assert.equal(findLinkBursts([p('a', 1, 0, 0), p('b', 2, 1, 0), p('c', 3, 2, 0)]).size, 0, 'different sends never add up');
  assert.equal(findLinkBursts([p('a', 1, null, 0), p('b', 1, null, 1), p('c', 1, 2, 2)]).size, 0, 'clicks without a link index are ignored');
  assert.deepEqual([...findLinkBursts([p('c', 1, 2, 900), p('a', 1, 0, 0), p('b', 1, 1, 0)])].sort(), ['a', 'b', 'c'], 'order of arrival does not matter');
  const base = { method: 'GET', userAgent: BROWSER['user-agent'], at: 100_000, sentAt: 0 };
  assert.deepEqual(classifyEngagement({ ...base, type: 'click', burst: true }), { isMachine: true, reason: 'link_burst' });
  assert.deepEqual(classifyEngagement({ ...base, type: 'click', burst: false }), { isMachine: false, reason: null });
  assert.deepEqual(classifyEngagement({ ...base, type: 'click', burst: true, method: 'HEAD' }), { isMachine: true, reason: 'head_request' }, 'the first reason wins');
});

// A clock in the past makes every flush read a send's recent clicks from the database (the window
// in memory covers only what happened since it was made); a clock at the present has the window
// answer. The labels must be the same either way.
for (const [when, start] of [
  ['database', undefined],
  ['window in memory', Date.now() + 60_000],
] as const) {
  forEachEngine(`honest engagement, recorded (recent clicks from the ${when})`, (h) => engagementSuite(h, start));
}

function engagementSuite(h: EngineHandle, start: number | undefined): void {
  const clock = manualClock(start);
  const notify = useNotify(h, { clock });

  async function setup() {
    const campaignId = await insertCampaign(notify().context.store);
    await notify().context.store.links.ensureScope(`c${campaignId}`, URLS, clock.now());
    const send = await insertSend(notify(), { campaignId });
    const click = async (i: number) => {
      const res = await call(notify(), clickPath(notify(), send.token, `c${campaignId}`, i), { headers: BROWSER, redirect: 'manual' });
      assert.equal(res.status, 302);
    };
    return { campaignId, send, click };
  }

  test('a burst of every link spread over several flushes: all its clicks become machine and the unique human click is given back', async () => {
    const { campaignId, send, click } = await setup();
    for (const i of [0, 1, 2, 3]) {
      await click(i);
      await notify().flush();
      clock.advance(300);
    }
    const events = await eventsOf(notify().context.store, send.id, 'click');
    assert.deepEqual(
      events.map((e) => [e.link_index, e.is_machine, e.machine_reason]),
      [0, 1, 2, 3].map((i) => [i, 1, 'link_burst']),
    );
    const row = await sendRow(notify().context.store, send.id);
    assert.notEqual(row.clicked_at, null, 'the raw first click stays, as the spec defines it');
    assert.equal(row.human_clicked_at, null);
    let c = await notify().context.store.counters.get(campaignId);
    assert.deepEqual([c.clicked, c.human_clicked], [1, 0]);
    const report = await notify().campaigns.getCampaignReport(campaignId);
    assert.deepEqual(report.machine, [{ type: 'click', reason: 'link_burst', events: 4 }]);
    assert.deepEqual(report.human, { opened: 0, clicked: 0 });

    clock.advance(60_000);
    await click(1);
    await notify().flush();
    c = await notify().context.store.counters.get(campaignId);
    assert.deepEqual([c.clicked, c.human_clicked], [1, 1], 'a later, single click is a reader');
    assert.equal(Number((await sendRow(notify().context.store, send.id)).human_clicked_at), clock.now());
  });

  test('a burst inside one flush, and a reader clicking two links quickly stays human', async () => {
    const burst = await setup();
    for (const i of [2, 0, 1]) await burst.click(i);
    await notify().flush();
    assert.deepEqual(
      (await eventsOf(notify().context.store, burst.send.id, 'click')).map((e) => e.machine_reason),
      ['link_burst', 'link_burst', 'link_burst'],
    );
    assert.equal((await notify().context.store.counters.get(burst.campaignId)).human_clicked, 0);

    const reader = await setup();
    await reader.click(0);
    clock.advance(500);
    await reader.click(1);
    await notify().flush();
    assert.deepEqual((await eventsOf(notify().context.store, reader.send.id, 'click')).map((e) => e.is_machine), [0, 0]);
    assert.equal((await notify().context.store.counters.get(reader.campaignId)).human_clicked, 1);
  });

  test('a human click before a burst keeps the send counted, from its own time', async () => {
    const { campaignId, send, click } = await setup();
    await click(3);
    const humanAt = clock.now();
    await notify().flush();
    clock.advance(30_000);
    for (const i of [0, 1, 2]) {
      await click(i);
      await notify().flush();
      clock.advance(200);
    }
    const labels = (await eventsOf(notify().context.store, send.id, 'click')).map((e) => e.machine_reason);
    assert.deepEqual(labels, [null, 'link_burst', 'link_burst', 'link_burst']);
    assert.equal(Number((await sendRow(notify().context.store, send.id)).human_clicked_at), humanAt);
    assert.equal((await notify().context.store.counters.get(campaignId)).human_clicked, 1);
  });

  test('a burst on a send without a campaign (a drip step, a one-off send) across flushes', async () => {
    await notify().context.store.links.ensureScope('s9001', URLS, clock.now());
    const send = await insertSend(notify(), { campaignId: null });
    const other = await insertSend(notify(), { campaignId: null });
    const click = async (token: string, i: number) => {
      const res = await call(notify(), clickPath(notify(), token, 's9001', i), { headers: BROWSER, redirect: 'manual' });
      assert.equal(res.status, 302);
      await notify().flush();
      clock.advance(300);
    };
    await click(send.token, 0);
    await click(other.token, 1);
    await click(send.token, 1);
    await click(send.token, 2);
    assert.deepEqual(
      (await eventsOf(notify().context.store, send.id, 'click')).map((e) => [e.link_index, e.machine_reason]),
      [
        [0, 'link_burst'],
        [1, 'link_burst'],
        [2, 'link_burst'],
      ],
    );
    assert.equal((await sendRow(notify().context.store, send.id)).human_clicked_at, null, 'its unique human click given back');
    assert.deepEqual((await eventsOf(notify().context.store, other.id, 'click')).map((e) => e.machine_reason), [null], 'a click of another send in between is not part of it');
  });

  test("clicks of other sends of the campaign in the window never add up to a send's burst", async () => {
    const { campaignId, send, click } = await setup();
    const others = [await insertSend(notify(), { campaignId }), await insertSend(notify(), { campaignId })];
    await click(0);
    await notify().flush();
    for (const [n, o] of others.entries()) {
      const res = await call(notify(), clickPath(notify(), o.token, `c${campaignId}`, n + 1), { headers: BROWSER, redirect: 'manual' });
      assert.equal(res.status, 302);
      await notify().flush();
      clock.advance(100);
    }
    await click(3);
    await notify().flush();
    for (const s of [send, ...others]) assert.deepEqual((await eventsOf(notify().context.store, s.id, 'click')).map((e) => e.is_machine).filter((m) => m !== 0), []);
    assert.equal((await notify().context.store.counters.get(campaignId)).human_clicked, 3);
  });

  test("a burst on an erased person's send still gives back the human click stored before the erasure", async () => {
    const { campaignId, send, click } = await setup();
    await click(0);
    await notify().flush();
    assert.equal(await notify().contacts.erase(send.contactId), true);
    clock.advance(300);
    for (const i of [1, 2]) {
      await click(i);
      await notify().flush();
      clock.advance(300);
    }
    assert.deepEqual(
      (await eventsOf(notify().context.store, send.id, 'click')).map((e) => [e.link_index, e.contact_id, e.machine_reason]),
      [
        [0, null, 'link_burst'],
        [1, null, 'link_burst'],
        [2, null, 'link_burst'],
      ],
    );
    assert.equal((await sendRow(notify().context.store, send.id)).human_clicked_at, null);
    assert.equal((await notify().context.store.counters.get(campaignId)).human_clicked, 0);
  });

  test('only the label and reason are stored: no IP (trackIpAddress is off) and no user agent', async () => {
    const { send } = await setup();
    const server = await serve(notify());
    try {
      await fetch(`${server.url}/notify/open/${send.token}`, { headers: { 'user-agent': 'Mozilla/5.0' } });
      const path = clickPath(notify(), send.token, `c${send.campaignId}`, 0);
      await fetch(`${server.url}${path}`, { headers: BROWSER, redirect: 'manual' });
      await fetch(`${server.url}${path}`, { method: 'HEAD', headers: BROWSER, redirect: 'manual' });
      await notify().flush();
    } finally {
      await server.close();
    }
    const events = await eventsOf(notify().context.store, send.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.is_machine, e.machine_reason, e.metadata]),
      [
        ['open', 1, 'apple_mail_privacy', {}],
        ['click', 0, null, {}],
        ['click', 1, 'head_request', {}],
      ],
    );
    const stored = JSON.stringify(events);
    assert.doesNotMatch(stored, /127\.0\.0\.1|Safari|Macintosh/);
  });
}

forEachEngine('a link burst whose clicks two instances recorded (two server processes on one database)', (h) => {
  const clock = manualClock(Date.now() + 60_000);
  const a = useNotify(h, { clock });
  const b = useNotify(h, { clock });

  test("each instance's window holds only its own clicks: the other's batches send it to the database", async () => {
    const campaignId = await insertCampaign(a().context.store);
    await a().context.store.links.ensureScope(`c${campaignId}`, URLS, clock.now());
    const send = await insertSend(a(), { campaignId });
    const click = async (n: typeof a, i: number) => {
      const res = await call(n(), clickPath(n(), send.token, `c${campaignId}`, i), { headers: BROWSER, redirect: 'manual' });
      assert.equal(res.status, 302);
      await n().flush();
      clock.advance(300);
    };
    await click(a, 0);
    await click(b, 1);
    await click(a, 2);
    assert.deepEqual(
      (await eventsOf(a().context.store, send.id, 'click')).map((e) => [e.link_index, e.machine_reason]),
      [
        [0, 'link_burst'],
        [1, 'link_burst'],
        [2, 'link_burst'],
      ],
    );
    const c = await a().context.store.counters.get(campaignId);
    assert.deepEqual([c.clicked, c.human_clicked], [1, 0]);
  });
});
