import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { untilNext } from '../../src/cli/commands/worker-run.ts';
import { loadConfig } from '../../src/config.ts';
import { LABELS_SETTLE_MS } from '../../src/store/outbox.ts';
import { dripWorld, type DripWorld } from '../drips/helpers.ts';
import { ENGINES } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { startReceiver } from './receiver.ts';

const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const DAY = 24 * 60 * 60_000;
const ADMIN = 'admin-token-0123456789abcdef';

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

    assert.equal((await w.notify.events.deliver()).delivered, 6, 'the opens-only endpoint at once');
    assert.equal(all.received.length, 0, 'the endpoint that takes clicks once their labels are final');
    w.clock.advance(LABELS_SETTLE_MS);
    const run = await w.notify.events.deliver();
    assert.equal(run.delivered, 9);
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

  test(`[${engine}] a click a later burst relabels reaches the webhook with its final label (a machine's, as the human-only figures count it), not the one heard at its flush`, async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's', events: ['notify:email.clicked'] }], adminToken: ADMIN });
    worlds.push(w);
    const admin = async (status: string) => (await call(w.notify, `/notify/admin/webhooks?status=${status}`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    const heard: Record<string, unknown>[] = [];
    w.notify.on('notify:email.clicked', (e) => void heard.push(e as unknown as Record<string, unknown>));
    await w.notify.contacts.upsert({ email: 'ann@example.com', lists: ['news'] });
    const campaign = await w.notify.campaigns.create({ subject: 'Three', html: '<p><a href="https://example.com/1">1</a> <a href="https://example.com/2">2</a> <a href="https://example.com/3">3</a></p>', list: 'news' });
    await w.notify.campaigns.send(campaign.id);
    const message = w.mailer.messages[0];
    const html = (message.html ?? message.raw?.toString('utf8') ?? '').replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const clicks = [...html.matchAll(/http:\/\/localhost:3000(\/notify\/click\/[^"\s]+)/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    assert.equal(clicks.length, 3);
    w.clock.advance(10 * 60_000);
    assert.equal((await call(w.notify, clicks[0], { headers: { 'user-agent': BROWSER } })).status, 302);
    await w.notify.flush();
    assert.equal((await w.notify.events.deliver()).delivered, 0, 'not before the burst window has closed');
    const waiting = await admin('pending');
    assert.match(waiting, /pending: 1</, 'the admin counts the waiting click as a pending delivery');
    assert.match(waiting, /<td class="n">1<\/td>\s*<td>notify:email.clicked<\/td>/, 'and lists its batch with the events it stands for');
    assert.doesNotMatch(waiting, />batch</, 'never a status of its own');
    // a link scanner follows the two other links within the burst window, flushed in a later batch
    w.clock.advance(500);
    for (const click of clicks.slice(1)) assert.equal((await call(w.notify, click, { headers: { 'user-agent': BROWSER } })).status, 302);
    await w.notify.flush();
    assert.deepEqual(heard.map((h) => [h.link_index, h.isMachine]), [[0, false], [1, true], [2, true]], 'in-process: the label at each flush');
    w.clock.advance(LABELS_SETTLE_MS);
    assert.equal((await w.notify.events.deliver()).delivered, 3);
    assert.match(await admin('delivered'), /pending: 0<[\s\S]*delivered: 3</);
    const got = receiver.received.map((e) => [e.data.link_index, e.data.isMachine, e.data.machineReason]).sort();
    assert.deepEqual(got, [[0, true, 'link_burst'], [1, true, 'link_burst'], [2, true, 'link_burst']], 'the webhook: the label the stored row holds once final');
    const send = await w.notify.context.store.db.selectFrom('notify_sends').select('human_clicked_at').where('token', '=', message.sendToken).executeTakeFirstOrThrow();
    assert.equal(send.human_clicked_at, null, 'as the human-only figures count it');
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
    await w.notify.events.deliver(); // the sends' and the join's events
    assert.equal(await untilNext(w.notify, interval), LABELS_SETTLE_MS, 'a tracking batch with clicks is due once their labels are final');
    w.clock.advance(LABELS_SETTLE_MS);
    assert.equal(await untilNext(w.notify, interval), 0, 'then at once');
  });
}
