import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createTrackingRecorder, type TrackedEvent } from '../../src/core/tracking-recorder.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, freshDatabaseUrl, testOptions, useNotify } from '../helpers/engines.ts';
import { eventsOf, insertCampaign, insertSend } from '../helpers/sends.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

const log = pino({ level: 'silent' });
const open = (token: string, at: number): TrackedEvent => ({ type: 'open', token, at, link_index: null, metadata: {}, method: 'GET', userAgent: 'Mozilla/5.0 (X11) Firefox/126' });
const click = (token: string, at: number): TrackedEvent => ({ ...open(token, at), type: 'click', link_index: 0 });

/**
 * The store commits the batch, then the reply is lost: the error is one both dialects classify as
 * a lost connection (PostgreSQL by its message, SQLite by its code), as when the socket drops
 * after COMMIT reached the server.
 */
function replyLostAfterCommit(store: Store) {
  const state = { dropNextReply: true, attempts: 0 };
  const applyBatch: Store['tracking']['applyBatch'] = async (...args) => {
    state.attempts++;
    const result = await store.tracking.applyBatch(...args);
    if (state.dropNextReply) {
      state.dropNextReply = false;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'SQLITE_BUSY' });
    }
    return result;
  };
  const wrapped = Object.assign(Object.create(store) as Store, { tracking: { ...store.tracking, applyBatch } });
  return { store: wrapped, state };
}

forEachEngine('tracking batch written once across a lost reply', (h) => {
  const a = useNotify(h);

  test('a batch whose commit succeeded but whose reply was lost is not written again on retry; counters count once', async () => {
    const real = a().context.store;
    assert.ok(real.dialect.isConnectionError(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'SQLITE_BUSY' })));
    const campaignId = await insertCampaign(real);
    const s1 = await insertSend(a(), { campaignId, sentAt: 0 });
    const s2 = await insertSend(a(), { campaignId, sentAt: 0 });
    const { store, state } = replyLostAfterCommit(real);
    const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
    rec.record(open(s1.token, 5000));
    rec.record(open(s1.token, 6000));
    rec.record(click(s2.token, 7000));
    await assert.rejects(rec.flush(), /Connection terminated/);
    assert.equal((await eventsOf(real, s1.id)).length + (await eventsOf(real, s2.id)).length, 3, 'the first attempt did commit');
    assert.equal(rec.stats.buffered, 3, 'an unknown outcome is kept for a retry');
    await rec.flush();
    assert.equal(state.attempts, 2);
    assert.equal((await eventsOf(real, s1.id)).length, 2, 'opens of send 1 stored once');
    assert.equal((await eventsOf(real, s2.id)).length, 1, 'click of send 2 stored once');
    const c = await real.counters.get(campaignId);
    assert.deepEqual([c.opened, c.human_opened, c.clicked, c.human_clicked], [1, 1, 1, 1]);
    assert.deepEqual(rec.stats, { buffered: 0, written: 3, dropped: 0 });
    await rec.close();
  });

  test('events recorded while a batch awaits its retry go into a later batch, written once each', async () => {
    const real = a().context.store;
    const campaignId = await insertCampaign(real);
    const s = await insertSend(a(), { campaignId, sentAt: 0 });
    const { store } = replyLostAfterCommit(real);
    const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000, maxBatch: 10 });
    rec.record(open(s.token, 1000));
    rec.record(open(s.token, 2000));
    await assert.rejects(rec.flush());
    rec.record(open(s.token, 3000));
    await rec.flush();
    assert.deepEqual((await eventsOf(real, s.id)).map((e) => Number(e.created_at)).sort(), [1000, 2000, 3000]);
    await rec.close();
  });

  test('the same batch id applied twice stores its events once; a batch without an id is not deduplicated', async () => {
    const store = a().context.store;
    const s = await insertSend(a(), { sentAt: 0 });
    const label = () => ({ isMachine: false, reason: null });
    const first = await store.tracking.applyBatch([open(s.token, 1)], label, 'batch-1');
    const second = await store.tracking.applyBatch([open(s.token, 1)], label, 'batch-1');
    assert.equal(first.inserted, 1);
    assert.deepEqual(second, { inserted: 1, unknown: 0, firstOpens: 0, firstClicks: 0, replayed: true });
    assert.equal((await eventsOf(store, s.id)).length, 1);
    await store.tracking.applyBatch([open(s.token, 2)], label);
    await store.tracking.applyBatch([open(s.token, 2)], label);
    assert.equal((await eventsOf(store, s.id)).length, 3);
  });

  test('pruneBatches removes batch ids older than the cutoff only', async () => {
    const store = a().context.store;
    const s = await insertSend(a(), { sentAt: 0 });
    const label = () => ({ isMachine: false, reason: null });
    await store.tracking.applyBatch([open(s.token, 1)], label, 'old-batch');
    assert.equal(await store.tracking.pruneBatches(Date.now() - 3_600_000), 0);
    assert.ok((await store.tracking.pruneBatches(Date.now() + 1)) >= 1);
    const again = await store.tracking.applyBatch([open(s.token, 1)], label, 'old-batch');
    assert.equal(again.replayed, undefined, 'a pruned id is forgotten');
  });
});

test('recorder: prunes old batch ids at most once an hour, a day back; a failed prune never fails a flush', async () => {
  let now = 10 * 86_400_000;
  const prunes: number[] = [];
  let pruneFails = false;
  const store = {
    dialect: { isConnectionError: () => false },
    tracking: {
      applyBatch: async (events: TrackedEvent[]) => ({ inserted: events.length, unknown: 0, firstOpens: 0, firstClicks: 0 }),
      async pruneBatches(before: number) {
        prunes.push(before);
        if (pruneFails) throw new Error('prune failed');
        return 0;
      },
    },
  } as unknown as Store;
  const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000, now: () => now });
  const flushOne = async () => {
    rec.record(open('t', now));
    await rec.flush();
  };
  await flushOne();
  assert.deepEqual(prunes, [now - 86_400_000]);
  now += 30 * 60_000;
  await flushOne();
  assert.equal(prunes.length, 1, 'not again within the hour');
  now += 31 * 60_000;
  pruneFails = true;
  await flushOne();
  assert.equal(prunes.length, 2);
  assert.equal(rec.stats.written, 3);
  await rec.close();
});

describe('tracking batch over a PostgreSQL connection dropped after COMMIT', { skip: !process.env.NOTIFY_TEST_PG_URL, timeout: 60_000 }, () => {
  let proxy: TcpProxy;
  let direct: Notify;
  let viaProxy: Notify;
  before(async () => {
    const url = new URL(freshDatabaseUrl('postgres').url);
    direct = await createNotify(testOptions(url.toString()));
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    viaProxy = await createNotify(testOptions(url.toString(), { tracking: { intervalMs: 60_000 } }));
  });
  after(async () => {
    await viaProxy.close();
    await proxy.close();
    await direct.context.store.dialect.destroyData();
  });

  // Opens alone are written by one statement with no COMMIT of its own: its reply is dropped after
  // the message that carries the batch's tokens. With a click the batch is an explicit transaction.
  for (const kind of ['opens alone', 'opens and a click'] as const) test(`the server commits, the reply is lost, the retry stores nothing twice (${kind})`, async () => {
    const campaignId = await insertCampaign(direct.context.store);
    const sends = await Promise.all(Array.from({ length: 20 }, () => insertSend(direct, { campaignId, sentAt: 0 })));
    const rec = createTrackingRecorder({ store: viaProxy.context.store, log }, { intervalMs: 60_000 });
    for (const [i, s] of sends.entries()) {
      rec.record(open(s.token, 1000 + i));
      rec.record(open(s.token, 2000 + i));
    }
    if (kind === 'opens and a click') rec.record(click(sends[0].token, 3000));
    const events = kind === 'opens alone' ? 40 : 41;
    const dropped = proxy.dropReplyAfter(kind === 'opens alone' ? sends[0].token : 'commit\0');
    await assert.rejects(rec.flush(), (err) => viaProxy.context.store.dialect.isConnectionError(err));
    await dropped;
    const stored = async () => (await Promise.all(sends.map((s) => eventsOf(direct.context.store, s.id)))).flat().length;
    // the server commits what it read before the connection's end; wait until it is visible
    for (let i = 0; i < 100 && (await stored()) < events; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await stored(), events, 'the first attempt committed although its client saw an error');
    await rec.flush();
    assert.equal(await stored(), events, 'the retry stored nothing again');
    const c = await direct.context.store.counters.get(campaignId);
    assert.deepEqual([c.opened, c.human_opened], [20, 20]);
    assert.deepEqual(rec.stats, { buffered: 0, written: events, dropped: 0 });
    await rec.close();
  });
});
