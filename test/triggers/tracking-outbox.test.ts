import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { untilNext } from '../../src/cli/commands/worker.ts';
import { loadConfig } from '../../src/config.ts';
import { dripWorld, type DripWorld } from '../drips/helpers.ts';
import { ENGINES } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { startReceiver } from './receiver.ts';

const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const DAY = 24 * 60 * 60_000;

const outbox = (w: DripWorld) => w.notify.context.store.db.selectFrom('notify_outbound_events').selectAll().orderBy('id').execute();

/** a campaign to `n` people sent, then each opens `opens` times and clicks once, through the HTTP endpoints, and the writer flushed */
async function engagement(w: DripWorld, n: number, opens: number) {
  const emails = Array.from({ length: n }, (_, i) => `p${i}@example.com`);
  for (const email of emails) await w.notify.contacts.upsert({ email, lists: ['news'] });
  const campaign = await w.notify.campaigns.create({ subject: 'Launch', html: '<p>Hi <a href="https://example.com/x">x</a></p>', list: 'news' });
  await w.notify.campaigns.send(campaign.id);
  w.clock.advance(10 * 60_000); // a person reads later: a click seconds after delivery is a scanner's
  for (const message of w.mailer.messages.filter((m) => m.subject === 'Launch')) {
    for (let i = 0; i < opens; i++) assert.equal((await call(w.notify, `/notify/open/${message.sendToken}`, { headers: { 'user-agent': BROWSER } })).status, 200);
    const html = (message.html ?? message.raw?.toString('utf8') ?? '').replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const click = /http:\/\/localhost:3000(\/notify\/click\/[^"\s]+)/.exec(html)![1].replace(/&amp;/g, '&');
    assert.equal((await call(w.notify, click, { headers: { 'user-agent': BROWSER } })).status, 302);
  }
  await w.notify.flush();
}

test('webhooksOutRetentionDays: a whole number of days from 0 (0 keeps every row); anything else is CONFIG_INVALID', async () => {
  for (const bad of [-1, 1.5, 'a week', '7 days']) {
    await assert.rejects(loadConfig({ webhooksOutRetentionDays: bad as never }, { configFile: false, envFile: false, env: {} }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, /webhooksOutRetentionDays/);
      return true;
    });
  }
  assert.equal((await loadConfig({}, { configFile: false, envFile: false, env: {} })).webhooksOutRetentionDays, 7);
  assert.equal((await loadConfig({}, { configFile: false, envFile: false, env: { NOTIFY_WEBHOOKS_OUT_RETENTION_DAYS: '0' } })).webhooksOutRetentionDays, 0);
});

for (const engine of ENGINES) {
  const worlds: DripWorld[] = [];
  after(async () => {
    for (const w of worlds) await w.close();
  });

  test(`[${engine}] opens and clicks cost the tracking batch one outbox row per endpoint; the worker delivers each event once, to the endpoints that take it, with an id from its stored row`, async (t) => {
    const all = await startReceiver();
    const opensOnly = await startReceiver();
    t.after(() => Promise.all([all.close(), opensOnly.close()]));
    const w = await dripWorld(engine, {
      webhooksOut: [
        { url: all.url, secret: 'a', events: ['notify:email.opened', 'notify:email.clicked'] },
        { url: opensOnly.url, secret: 'b', events: ['notify:email.opened'] },
      ],
    });
    worlds.push(w);
    await engagement(w, 3, 2);

    const written = await outbox(w);
    assert.deepEqual(
      written.map((r) => [r.endpoint, r.status, r.type]),
      [
        [all.url, 'batch', 'notify:email.opened,notify:email.clicked'],
        [opensOnly.url, 'batch', 'notify:email.opened'],
      ],
      'one row per endpoint for the whole batch, none per open',
    );
    const stored = await w.notify.context.store.db.selectFrom('notify_events').select(['id', 'type']).where('type', 'in', ['open', 'click']).orderBy('id').execute();
    assert.equal(stored.length, 9);

    const run = await w.notify.events.deliver();
    assert.equal(run.delivered, 9 + 6);
    const ids = (kind: string) => stored.filter((e) => kind === 'all' || e.type === kind).map((e) => `evt_e${e.id}`);
    assert.deepEqual(all.received.map((e) => e.id).sort(), ids('all').sort(), 'every open and click, each once, its id made from its event row');
    assert.deepEqual(opensOnly.received.map((e) => e.id).sort(), ids('open').sort(), 'the second endpoint takes opens only');
    assert.ok(all.received.every((e) => w.notify.events.verify(e.body, e.signature, 'a', { now: w.clock.now() })));
    const click = all.received.find((e) => e.type === 'notify:email.clicked')!;
    assert.deepEqual(Object.keys(click.data), ['send', 'at', 'link_index', 'isMachine', 'machineReason']);
    assert.equal(click.data.link_index, 0);
    assert.deepEqual((await outbox(w)).map((r) => r.status).filter((s) => s !== 'delivered'), [], 'the batch rows are gone, every delivery recorded');
    assert.equal((await w.notify.events.deliver()).delivered, 0, 'nothing twice');
  });

  test(`[${engine}] two batches whose ranges overlap (concurrent writers) still give each event one delivery per endpoint`, async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's', events: ['notify:email.opened'] }] });
    worlds.push(w);
    await engagement(w, 2, 3);
    const db = w.notify.context.store.db;
    const [batch] = await outbox(w);
    const range = JSON.parse(batch.body) as { after: number; upTo: number };
    // a second batch row whose range covers the same events, as a concurrent writer's would
    await db
      .insertInto('notify_outbound_events')
      .values({ ...batch, id: undefined, event_id: 'bat_other', body: JSON.stringify({ after: range.after - 5, upTo: range.upTo }) } as never)
      .execute();
    await w.notify.events.deliver();
    assert.equal(receiver.received.length, 6);
    assert.equal(new Set(receiver.received.map((e) => e.id)).size, 6, 'no event twice');
    assert.ok(receiver.received.every((e) => e.type === 'notify:email.opened'), 'the clicks in the range are not taken by an opens-only endpoint');
  });

  test(`[${engine}] batches written at the same time each name their own events; a batch of unknown tokens writes no outbox row`, async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's', events: ['notify:email.opened'] }] });
    worlds.push(w);
    await engagement(w, 3, 1);
    const { store } = w.notify.context;
    const before = (await outbox(w)).length;
    const tokens = w.mailer.messages.filter((m) => m.subject === 'Launch').map((m) => m.sendToken);
    const open = (token: string) => ({ type: 'open' as const, token, at: w.clock.now(), link_index: null, metadata: {}, method: 'GET', userAgent: BROWSER });
    const label = () => ({ isMachine: false, reason: null });
    assert.equal((await store.tracking.applyBatch([open('no-such-token')], label)).unknown, 1);
    assert.equal((await outbox(w)).length, before, 'nothing stored, nothing to announce');
    // concurrent writers (two processes' flushes): on PostgreSQL their ids interleave
    const batches = Array.from({ length: 4 }, (_, b) => Array.from({ length: 50 }, (_, i) => open(tokens[(b + i) % tokens.length])));
    await Promise.all(batches.map((events) => store.tracking.applyBatch(events, label)));
    const opens = await store.db.selectFrom('notify_events').select('id').where('type', '=', 'open').execute();
    assert.equal(opens.length, 3 + 200);
    await w.notify.events.deliver();
    assert.deepEqual(receiver.received.map((e) => e.id).sort(), opens.map((e) => `evt_e${e.id}`).sort(), 'every open once');
  });

  test(`[${engine}] retention: delivered and dead rows go webhooksOutRetentionDays after they were settled, pending ones stay; 0 keeps all`, async (t) => {
    let answer = 204;
    const receiver = await startReceiver((_req, res) => void res.writeHead(answer).end());
    t.after(() => receiver.close());
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's', events: ['notify:contact.subscribed'] }], webhooksOutRetentionDays: 2 });
    worlds.push(w);
    const statuses = async () => (await outbox(w)).map((r) => `${JSON.parse(r.body).data.contact.email}:${r.status}`);
    await w.notify.contacts.upsert({ email: 'delivered@example.com', lists: ['news'] });
    await w.notify.events.deliver();
    answer = 500;
    await w.notify.contacts.upsert({ email: 'dies@example.com', lists: ['news'] });
    for (let i = 0; i < 30 && (await statuses()).includes('dies@example.com:pending'); i++) {
      w.clock.advance(2 * 60 * 60_000);
      await w.notify.events.deliver();
    }
    assert.deepEqual(await statuses(), ['delivered@example.com:delivered', 'dies@example.com:dead']);
    // the delivered row was settled a day ago, the dead one just now: a day later only the first is older than 2 days
    w.clock.advance(DAY + 60_000);
    await w.notify.contacts.upsert({ email: 'pending@example.com', lists: ['news'] });
    assert.equal((await w.notify.events.deliver()).pruned, 1);
    assert.deepEqual(await statuses(), ['dies@example.com:dead', 'pending@example.com:pending'], 'a pending row is never pruned');
    w.clock.advance(DAY + 60_000);
    await w.notify.events.deliver();
    assert.deepEqual((await statuses()).filter((s) => s.startsWith('dies')), [], 'a dead row stays until retention too, then goes');

    const keep = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's', events: ['notify:contact.subscribed'] }], webhooksOutRetentionDays: 0 });
    worlds.push(keep);
    answer = 204;
    await keep.notify.contacts.upsert({ email: 'kept@example.com', lists: ['news'] });
    await keep.notify.events.deliver();
    keep.clock.advance(400 * DAY);
    assert.equal((await keep.notify.events.deliver()).pruned, 0);
    assert.equal((await outbox(keep)).length, 1);
  });

  test(`[${engine}] the worker's pause ends when the earliest retry is due, not a whole interval later (by the instance's clock)`, async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's' }] });
    worlds.push(w);
    const interval = 60_000;
    assert.equal(await untilNext(w.notify, interval), interval, 'nothing waiting: the interval');
    await receiver.down();
    await w.notify.contacts.upsert({ email: 'later@example.com', lists: ['news'] });
    assert.equal(await untilNext(w.notify, interval), 0, 'a new event is due at once');
    await w.notify.events.deliver();
    assert.equal(await untilNext(w.notify, interval), 10_000, 'the first retry, 10 s after the refused try');
    w.clock.advance(4_000);
    assert.equal(await untilNext(w.notify, interval), 6_000);
    await receiver.up();
    w.clock.advance(6_000);
    assert.equal(await untilNext(w.notify, interval), 0);
    assert.equal((await w.notify.events.deliver()).delivered, 1);
    assert.equal(await untilNext(w.notify, interval), interval, 'delivered: back to the interval');

    await engagement(w, 1, 1);
    assert.equal(await untilNext(w.notify, interval), 0, 'a tracking batch waiting to be expanded is due at once');
  });
}
