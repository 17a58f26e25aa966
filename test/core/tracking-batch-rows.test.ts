import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { createTrackingRecorder, type TrackedEvent } from '../../src/core/tracking-recorder.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { eventsOf, insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const log = pino({ level: 'silent' });
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/126.0';

forEachEngine('tracking batch rows', (h) => {
  const a = useNotify(h);

  test('lockRowsByKey: rows of the keys that exist, values in the columns order, bigints as numbers', async () => {
    const { store } = a().context;
    const campaignId = await insertCampaign(store);
    const s1 = await insertSend(a(), { campaignId, sentAt: 7 });
    const s2 = await insertSend(a(), { campaignId: null, sentAt: 9 });
    const rows = await store.dialect.writeTransaction(store.db, (trx) =>
      store.dialect.lockRowsByKey(trx, 'notify_sends', 'token', ['token', 'id', 'campaign_id', 'sent_at'], [s2.token, 'unknownunknownunknown0', s1.token, "x' or '1'='1"]),
    );
    const sorted = [...rows].sort((x, y) => Number(x[1]) - Number(y[1]));
    assert.deepEqual(sorted, [
      [s1.token, s1.id, campaignId, 7],
      [s2.token, s2.id, null, 9],
    ]);
    assert.deepEqual(await store.dialect.writeTransaction(store.db, (trx) => store.dialect.lockRowsByKey(trx, 'notify_sends', 'token', ['id'], [])), []);
  });

  // The SQLite writer inserts 64 rows per statement and the rest one by one: sizes around both.
  for (const size of [1, 63, 64, 65, 131]) {
    test(`a batch of ${size} events stores each one with its own columns, in any token order`, async () => {
      const { store } = a().context;
      const campaignId = await insertCampaign(store);
      const sends = [await insertSend(a(), { campaignId, sentAt: 0 }), await insertSend(a(), { campaignId, sentAt: 0 }), await insertSend(a(), { campaignId: null, sentAt: 0 })];
      const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
      const events: TrackedEvent[] = Array.from({ length: size }, (_, i) => ({
        type: i % 2 ? 'click' : 'open',
        token: sends[i % 3].token,
        at: 100_000 + i * 10_000,
        link_index: i % 2 ? i % 7 : null,
        metadata: i % 5 === 0 ? { ip: `10.0.0.${i % 250}` } : {},
        method: i % 11 === 3 ? 'HEAD' : 'GET',
        userAgent: i % 13 === 4 ? 'curl/8.5' : BROWSER,
      }));
      for (const e of events) rec.record(e);
      rec.record({ ...events[0], token: 'unknownunknownunknown0' });
      await rec.close();
      const stored = (await Promise.all(sends.map((s) => eventsOf(store, s.id)))).flat();
      assert.equal(stored.length, size, 'one row per event, none for the unknown token');
      const key = (r: { send_id: unknown; created_at: unknown }) => `${r.send_id}@${r.created_at}`;
      const byKey = new Map(stored.map((r) => [key(r), r]));
      for (const [i, e] of events.entries()) {
        const send = sends[i % 3];
        const row = byKey.get(key({ send_id: send.id, created_at: e.at }));
        assert.ok(row, `event ${i} stored`);
        assert.equal(row.type, e.type);
        assert.equal(row.link_index === null ? null : Number(row.link_index), e.link_index);
        assert.deepEqual(typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata, e.metadata);
        assert.equal(row.campaign_id === null ? null : Number(row.campaign_id), i % 3 === 2 ? null : campaignId);
        const reason = e.method === 'HEAD' ? 'head_request' : e.userAgent === BROWSER ? null : 'bot_user_agent';
        assert.equal(row.machine_reason, reason, `event ${i}`);
        assert.equal(Number(row.is_machine), reason ? 1 : 0);
      }
      const first = await sendRow(store, sends[0].id);
      assert.equal(Number(first?.opened_at), 100_000, 'the first open of the send is its opened_at');
    });
  }

  // PostgreSQL sends a json column that is empty in every row as one constant, not as an array
  // (store/postgres/column-arrays.ts): batches of one type, all empty, all but one empty
  for (const type of ['open', 'click'] as const) {
    for (const withOne of [false, true]) {
      test(`a batch of ${type}s whose metadata is ${withOne ? 'empty but in one' : 'empty in every one'} stores each event's own`, async () => {
        const { store } = a().context;
        const campaignId = await insertCampaign(store);
        const send = await insertSend(a(), { campaignId, sentAt: 0 });
        const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
        const metadata = (i: number) => (withOne && i === 2 ? { ip: '10.0.0.2' } : {});
        for (let i = 0; i < 4; i++) rec.record({ type, token: send.token, at: 100_000 + i * 10_000, link_index: type === 'click' ? i : null, metadata: metadata(i), method: 'GET', userAgent: BROWSER });
        await rec.close();
        const stored = (await eventsOf(store, send.id)).sort((x, y) => Number(x.created_at) - Number(y.created_at));
        assert.deepEqual(
          stored.map((r) => [r.type, typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata]),
          [0, 1, 2, 3].map((i) => [type, metadata(i)]),
        );
      });
    }
  }
});

forEachEngine('tracking batch without foreign-key checks', (h) => {
  const a = useNotify(h);

  test('a large batch is stored whole, and the checks are back on for every later statement, also after a failed batch', async () => {
    const { store } = a().context;
    const campaignId = await insertCampaign(store);
    const send = await insertSend(a(), { campaignId, sentAt: 0 });
    const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
    for (let i = 0; i < 700; i++) rec.record({ type: 'open', token: send.token, at: 10_000 + i, link_index: null, metadata: {}, method: 'GET', userAgent: BROWSER });
    await rec.flush();
    assert.equal((await eventsOf(store, send.id)).length, 700);
    // a batch whose write fails (a duplicate batch id in the same store, as a replay finds it) leaves the checks on too
    await assert.rejects(
      store.dialect.writeTransaction(store.db, async (trx) => {
        await trx.insertInto('notify_tracking_batches').values({ id: 'dup', events: 0, created_at: 1 }).execute();
        await trx.insertInto('notify_tracking_batches').values({ id: 'dup', events: 0, created_at: 1 }).execute();
      }, { referencesRead: true }),
    );
    if (h.engine !== 'sqlite') return; // PostgreSQL keeps no foreign keys on notify_events (migration 016)
    const orphan = { type: 'open', send_id: 999_999, contact_id: null, campaign_id: null, link_index: null, metadata: '{}', is_machine: 0, machine_reason: null, created_at: 1 };
    await assert.rejects(store.db.insertInto('notify_events').values(orphan).execute(), /FOREIGN KEY/);
  });
});

/** A store that labels each event of a batch and keeps the labels instead of writing them. */
function labellingStore() {
  const labels: (string | null)[] = [];
  const store = {
    dialect: { isConnectionError: () => false },
    tracking: {
      async applyBatch(events: TrackedEvent[], label: (e: TrackedEvent, s: { sent_at: number | null }, h: { burst: boolean }) => { reason: string | null }) {
        for (const e of events) labels.push(label(e, { sent_at: null }, { burst: false }).reason);
        return { inserted: events.length, unknown: 0, firstOpens: 0, firstClicks: 0 };
      },
    },
  } as unknown as Store;
  return { store, labels };
}

test('recorder labels: the remembered user-agent verdicts keep method and user agent apart, and hold past their limit', async () => {
  const { store, labels } = labellingStore();
  const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
  const ev = (method: string, userAgent: string): TrackedEvent => ({ type: 'open', token: 't', at: 1, link_index: null, metadata: {}, method, userAgent });
  const cases: [TrackedEvent, string | null][] = [
    [ev('GET', 'HEAD x'), null],
    [ev('HEAD', 'x'), 'head_request'],
    [ev('GET', 'x'), null],
    [ev('GET', 'HEAD x'), null],
    [ev('GET', `python-requests/2.31 ${'a'.repeat(600)}`), 'bot_user_agent'],
    [ev('GET', `${'a'.repeat(600)}`), null],
    [ev('GET', ''), 'no_user_agent'],
    [ev('GET', 'Mozilla/5.0'), 'apple_mail_privacy'],
  ];
  // more distinct user agents than are remembered, between the cases and their repeats
  const filler = Array.from({ length: 1500 }, (_, i) => ev('GET', `Reader/${i}`));
  for (const e of [...cases.map(([e]) => e), ...filler, ...cases.map(([e]) => e)]) rec.record(e);
  await rec.close();
  const expected = cases.map(([, r]) => r);
  assert.deepEqual(labels.slice(0, cases.length), expected);
  assert.deepEqual(labels.slice(-cases.length), expected);
  assert.ok(labels.slice(cases.length, -cases.length).every((r) => r === null));
});
