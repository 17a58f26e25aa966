import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { manualClock } from '../../src/core/clock.ts';
import { newToken } from '../../src/core/tokens.ts';
import { createNotify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { eventsOf, insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

async function assertPixel(res: Response): Promise<void> {
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/gif');
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const body = Buffer.from(await res.arrayBuffer());
  assert.equal(body.length, 43);
  assert.deepEqual(body, GIF);
}

forEachEngine('GET /notify/open', (h) => {
  const clock = manualClock();
  const notify = useNotify(h, { clock });

  test('a known token gets the GIF, an open event on every load, opened_at on the first only', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId });
    const first = clock.now();
    await assertPixel(await call(notify(), `/notify/open/${send.token}`, { headers: { 'user-agent': BROWSER } }));
    await notify().flush();
    assert.equal(Number((await sendRow(notify().context.store, send.id)).opened_at), first, 'the first load sets opened_at');
    // the second load is written in a batch of its own, against a row whose opened_at is already set
    clock.advance(60_000);
    await assertPixel(await call(notify(), `/notify/open/${send.token}`, { headers: { 'user-agent': BROWSER } }));
    await notify().flush();
    const events = await eventsOf(notify().context.store, send.id, 'open');
    assert.equal(events.length, 2);
    assert.deepEqual(
      events.map((e) => [Number(e.campaign_id), Number(e.contact_id), Number(e.is_machine), e.metadata]),
      [
        [campaignId, send.contactId, 0, {}],
        [campaignId, send.contactId, 0, {}],
      ],
    );
    assert.deepEqual(
      events.map((e) => Number(e.created_at)),
      [first, first + 60_000],
    );
    assert.equal(Number((await sendRow(notify().context.store, send.id)).opened_at), first, 'a later load does not move it');
    const counters = await notify().context.store.counters.get(campaignId);
    assert.equal(counters.opened, 1);
    assert.equal(counters.human_opened, 1);
  });

  test('unknown, malformed and hostile tokens get the same GIF and record nothing', async () => {
    const before = await notify().context.store.db.selectFrom('notify_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const send = await insertSend(notify());
    for (const t of [newToken(), '', 'x', 'a'.repeat(5000), '..%2F..%2Fetc%2Fpasswd', '%00', "'%20or%201=1--", '<script>', `${send.token}.gif`, `${send.token}/x`, `x/${send.token}`]) {
      await assertPixel(await call(notify(), `/notify/open/${t}`));
    }
    await notify().flush();
    const after = await notify().context.store.db.selectFrom('notify_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
  });

  test('machine opens are recorded and labelled, and do not count as human', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId });
    await assertPixel(await call(notify(), `/notify/open/${send.token}`, { headers: { 'user-agent': 'Mozilla/5.0' } }));
    const head = await call(notify(), `/notify/open/${send.token}`, { method: 'HEAD', headers: { 'user-agent': BROWSER } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'image/gif');
    const gmail = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
    await assertPixel(await call(notify(), `/notify/open/${send.token}`, { headers: { 'user-agent': gmail } }));
    await assertPixel(await call(notify(), `/notify/open/${send.token}`));
    await assertPixel(await call(notify(), `/notify/open/${send.token}`, { headers: { 'user-agent': 'python-requests/2.32.3' } }));
    await notify().flush();
    const events = await eventsOf(notify().context.store, send.id, 'open');
    assert.deepEqual(
      events.map((e) => [Number(e.is_machine), e.machine_reason]),
      [
        [1, 'apple_mail_privacy'],
        [1, 'head_request'],
        [1, 'google_image_proxy'],
        [1, 'no_user_agent'],
        [1, 'bot_user_agent'],
      ],
    );
    const row = await sendRow(notify().context.store, send.id);
    assert.notEqual(row.opened_at, null);
    assert.equal(row.human_opened_at, null);
    assert.deepEqual(await notify().context.store.counters.get(campaignId).then((c) => [c.opened, c.human_opened]), [1, 0]);

    // a person opening it later is the send's first human open: counted once, beside the raw figure
    clock.advance(60_000);
    for (let i = 0; i < 2; i++) await assertPixel(await call(notify(), `/notify/open/${send.token}`, { headers: { 'user-agent': BROWSER } }));
    await notify().flush();
    const later = await sendRow(notify().context.store, send.id);
    assert.equal(Number(later.opened_at), Number(row.opened_at), 'opened_at stays the first open');
    assert.equal(Number(later.human_opened_at), clock.now());
    assert.deepEqual(await notify().context.store.counters.get(campaignId).then((c) => [c.opened, c.human_opened]), [1, 1]);
  });
});

forEachEngine('GET /notify/open with the database down', (h) => {
  test('still answers the GIF; close() reports and does not throw', async () => {
    const logs: { level: number; msg: string; events?: number; lost?: number }[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        logs.push(JSON.parse(String(chunk)));
        cb();
      },
    });
    const notify = await createNotify({ ...testOptions(h.url), logger: pino({ level: 'warn' }, stream) });
    const send = await insertSend(notify);
    await notify.context.store.close();
    await assertPixel(await call(notify, `/notify/open/${send.token}`));
    await assertPixel(await call(notify, `/notify/open/${newToken()}`));
    await assert.doesNotReject(notify.close());
    // the report: the batch that failed, then how many events close() could not keep, both errors
    const errors = logs.filter((l) => l.level >= 50).map(({ msg, events, lost }) => ({ msg, events, lost }));
    assert.deepEqual(errors, [
      { msg: 'tracking events could not be written', events: 2, lost: undefined },
      { msg: 'tracking events lost on close', events: undefined, lost: 2 },
    ]);
    // and they are indeed not in the database
    const store = createStore(h.url);
    try {
      assert.deepEqual(await eventsOf(store, send.id), []);
    } finally {
      await store.close();
    }
  });

  test('an unreachable PostgreSQL server does not change the answer', { skip: h.engine !== 'postgres' }, async () => {
    const notify = await createNotify(
      testOptions('postgres://postgres@127.0.0.1:9/none', { migrate: false, secret: 'test-secret', tracking: { intervalMs: 5 } }),
    );
    const t0 = Date.now();
    await assertPixel(await call(notify, `/notify/open/${newToken()}`));
    assert.ok(Date.now() - t0 < 500, 'the pixel never waits for the database');
    await notify.close();
  });
});
