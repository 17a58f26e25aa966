import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { createTrackingRecorder, type TrackedEvent } from '../../src/core/tracking-recorder.ts';
import { createNotify } from '../../src/notify.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { eventsOf, insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const event = (token: string, at = 1): TrackedEvent => ({ type: 'open', token, at, link_index: null, metadata: {}, method: 'GET', userAgent: 'Mozilla/5.0 (X11) Firefox/126' });

/** A store whose applyBatch is scripted: each call takes the next outcome. */
function scriptedStore(outcomes: ('ok' | 'down' | 'bad')[]) {
  const batches: number[] = [];
  const store = {
    dialect: { isConnectionError: (e: unknown) => (e as Error).message === 'down' },
    tracking: {
      async applyBatch(events: TrackedEvent[]) {
        const outcome = outcomes.shift() ?? 'ok';
        if (outcome !== 'ok') throw new Error(outcome);
        batches.push(events.length);
        return { inserted: events.length, unknown: 0, firstOpens: 0, firstClicks: 0 };
      },
    },
  } as unknown as Store;
  return { store, batches };
}

const log = pino({ level: 'silent' });

test('recorder: writes in batches of maxBatch, one flush at a time, everything on flush()', async () => {
  const { store, batches } = scriptedStore([]);
  const rec = createTrackingRecorder({ store, log }, { maxBatch: 10, intervalMs: 60_000 });
  for (let i = 0; i < 25; i++) rec.record(event(`t${i}`));
  await rec.flush();
  assert.deepEqual(batches, [10, 10, 5]);
  assert.deepEqual(rec.stats, { buffered: 0, written: 25, dropped: 0 });
});

test('recorder: a database outage keeps events for a retry; other errors drop the batch; close never throws', async () => {
  const { store, batches } = scriptedStore(['down', 'ok', 'bad', 'down']);
  const rec = createTrackingRecorder({ store, log }, { maxBatch: 100, intervalMs: 60_000 });
  rec.record(event('a'));
  rec.record(event('b'));
  await assert.rejects(rec.flush(), /down/);
  assert.equal(rec.stats.buffered, 2);
  await rec.flush();
  assert.deepEqual(batches, [2]);
  rec.record(event('c'));
  await assert.rejects(rec.flush(), /bad/);
  assert.deepEqual(rec.stats, { buffered: 0, written: 2, dropped: 1 });
  rec.record(event('d'));
  await rec.close();
  assert.deepEqual(rec.stats, { buffered: 0, written: 2, dropped: 2 });
  rec.record(event('e'));
  assert.equal(rec.stats.dropped, 3, 'events after close are dropped, not buffered');
});

test('recorder: the interval flushes without being asked; the buffer is bounded', async () => {
  const { store, batches } = scriptedStore([]);
  const rec = createTrackingRecorder({ store, log }, { maxBatch: 1000, intervalMs: 5, maxBuffered: 3 });
  for (let i = 0; i < 5; i++) rec.record(event(`t${i}`));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(batches, [3]);
  assert.equal(rec.stats.dropped, 2);
  await rec.close();
});

forEachEngine('tracking batches', (h) => {
  const a = useNotify(h);

  // Two SQLite connections in one process would block each other's thread (busy_timeout is a
  // synchronous wait); the cross-process SQLite case runs in test/http/load.test.ts.
  test('two instances flushing the same token at once count one first open', async () => {
    const b = await createNotify(testOptions(h.url));
    try {
      const campaignId = await insertCampaign(a().context.store);
      const send = await insertSend(a(), { campaignId });
      const recA = createTrackingRecorder(a().context, { intervalMs: 60_000 });
      const recB = createTrackingRecorder(b.context, { intervalMs: 60_000 });
      for (let i = 0; i < 300; i++) {
        recA.record(event(send.token, 1000 + i));
        recB.record(event(send.token, 1000 + i));
      }
      await Promise.all([recA.flush(), recB.flush()]);
      assert.equal((await eventsOf(a().context.store, send.id)).length, 600);
      assert.equal(Number((await sendRow(a().context.store, send.id)).opened_at), 1000);
      const c = await a().context.store.counters.get(campaignId);
      assert.deepEqual([c.opened, c.human_opened], [1, 1]);
    } finally {
      await b.close();
    }
  });

  test('a batch mixes known and unknown tokens, many sends, opens and clicks; the earliest event sets the first time', async () => {
    const store = a().context.store;
    const campaignId = await insertCampaign(store);
    const sends = await Promise.all(Array.from({ length: 30 }, () => insertSend(a(), { campaignId, sentAt: 0 })));
    const events: TrackedEvent[] = [];
    for (const [i, s] of sends.entries()) {
      events.push(event(s.token, 5000 + i), event(s.token, 4000 + i), { ...event(s.token, 9000), type: 'click', link_index: 1 });
      events.push(event(`unknown${String(i).padStart(15, '0')}`));
    }
    const result = await store.tracking.applyBatch(events, () => ({ isMachine: false, reason: null }));
    assert.deepEqual(result, { inserted: 90, unknown: 30, firstOpens: 30, firstClicks: 30 });
    for (const [i, s] of sends.entries()) {
      const row = await sendRow(store, s.id);
      assert.deepEqual([Number(row.opened_at), Number(row.human_opened_at), Number(row.clicked_at)], [4000 + i, 4000 + i, 9000]);
    }
    const again = await store.tracking.applyBatch([event(sends[0].token, 1)], () => ({ isMachine: false, reason: null }));
    assert.equal(again.firstOpens, 0, 'a later batch never moves a first open, even to an earlier time');
    assert.equal(Number((await sendRow(store, sends[0].id)).opened_at), 4000);
    const c = await store.counters.get(campaignId);
    assert.deepEqual([c.opened, c.human_opened, c.clicked, c.human_clicked], [30, 30, 30, 30]);
  });

  test('stored events keep every value as recorded: awkward metadata text, null and numeric links, labels', async () => {
    const store = a().context.store;
    const send = await insertSend(a(), { campaignId: await insertCampaign(store) });
    const odd = { ip: '2001:db8::1', note: 'a "quoted", {braced} \\ back\\slash, NULL, comma, ünïcode 😀', nested: { list: [1, null, 'x'] } };
    const events: TrackedEvent[] = [
      { ...event(send.token, 10), metadata: odd },
      { ...event(send.token, 11), type: 'click', link_index: 0 },
      { ...event(send.token, 12), type: 'click', link_index: 7, metadata: { ip: 'NULL' } },
    ];
    await store.tracking.applyBatch(events, (e) => (e.link_index === 7 ? { isMachine: true, reason: 'bot_user_agent' } : { isMachine: false, reason: null }));
    const rows = (await eventsOf(store, send.id)).map((r) => [r.type, r.link_index, r.metadata, r.is_machine, r.machine_reason, Number(r.created_at)]);
    assert.deepEqual(rows, [
      ['open', null, odd, 0, null, 10],
      ['click', 0, {}, 0, null, 11],
      ['click', 7, { ip: 'NULL' }, 1, 'bot_user_agent', 12],
    ]);
  });
});
