import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyEngagement } from '../../src/core/engagement.ts';
import type { OutboundEventType } from '../../src/core/storage/outbound.ts';
import type { EventLabeler, TrackedEvent } from '../../src/core/storage/tracking-batches.ts';
import type { Notify } from '../../src/notify.ts';
import type { StoreDialect } from '../../src/store/dialect.ts';
import { createStore, type Store } from '../../src/store/index.ts';
import { createOutbox, TRACKED_TYPES } from '../../src/store/outbox.ts';
import { createTrackingRepo } from '../../src/store/repos/tracking-batches.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { eventsOf, insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/126.0';
const ENDPOINT = 'https://hooks.example.com/in';
const label: EventLabeler = (e, send, hints) =>
  classifyEngagement({ type: e.type, method: e.method, userAgent: e.userAgent, at: e.at, sentAt: send.sent_at, burst: hints.burst });
const click = (token: string, at: number, link: number, extra: Partial<TrackedEvent> = {}): TrackedEvent => ({
  type: 'click',
  token,
  at,
  link_index: link,
  metadata: {},
  method: 'GET',
  userAgent: BROWSER,
  ...extra,
});

/** a webhooksOut endpoint for clicks, no in-process listener: what lets a batch of clicks take one statement */
const sink = {
  endpointsFor: (type: OutboundEventType) => (type === TRACKED_TYPES.click ? [ENDPOINT] : []),
  wants: (type: OutboundEventType) => type === TRACKED_TYPES.click,
  listens: () => false,
  publish: () => {},
};

/** a tracking writer, counting the batches the engine's one-statement path wrote; `general`: without that path */
function writer(store: Store, general = false) {
  const written = { statement: 0 };
  const own = store.dialect.writeClicks;
  const dialect: StoreDialect = {
    ...store.dialect,
    writeClicks:
      general || !own
        ? undefined
        : async (...args) => {
            const r = await own(...args);
            if (r) written.statement++;
            return r;
          },
  };
  return { repo: createTrackingRepo(store.db, dialect, createOutbox(sink, dialect)), written };
}

/** four sends of a new campaign and one of none, each in the state the batch meets it in */
async function sends(n: Notify, base: number) {
  const campaignId = await insertCampaign(n.context.store);
  const noOpen = await insertSend(n, { campaignId, sentAt: base - 60_000 });
  const justSent = await insertSend(n, { campaignId, sentAt: base - 1_000 });
  const clicked = await insertSend(n, { campaignId, sentAt: base - 60_000 });
  const oneOff = await insertSend(n, { campaignId: null, sentAt: base - 60_000 });
  await n.context.store.db.updateTable('notify_sends').set({ opened_at: base - 2_000, human_opened_at: base - 2_000 }).where('id', '=', justSent.id).execute();
  await n.context.store.db.updateTable('notify_sends').set({ clicked_at: base - 500, human_clicked_at: base - 500 }).where('id', '=', clicked.id).execute();
  return { campaignId, all: [noOpen, justSent, clicked, oneOff] };
}

/** what a batch left: events, first times and counters, with the sends named by their place */
async function stateOf(store: Store, s: Awaited<ReturnType<typeof sends>>) {
  const events = [];
  const firsts = [];
  for (const [i, send] of s.all.entries()) {
    for (const e of await eventsOf(store, send.id)) events.push([i, e.type, e.contact_id === null ? null : Number(e.contact_id) - send.contactId, e.link_index, e.metadata, e.is_machine, e.machine_reason, Number(e.created_at)]);
    const row = await sendRow(store, send.id);
    firsts.push([i, row.clicked_at, row.human_clicked_at, row.opened_at].map((v) => (v === null ? null : Number(v))));
  }
  const c = await store.counters.get(s.campaignId);
  return { events, firsts, counters: [c.opened, c.human_opened, c.clicked, c.human_clicked] };
}

/** the outbox rows of the batch: their endpoint, type and the event ids they name */
async function outboxOf(store: Store, since: number) {
  const rows = await store.db.selectFrom('notify_outbound_events').selectAll().where('id', '>', since).orderBy('id').execute();
  return rows.map((r) => ({ endpoint: r.endpoint, type: r.type, range: JSON.parse(r.body) as { after: number; upTo: number } }));
}

const lastOutbox = async (store: Store) => Number((await store.db.selectFrom('notify_outbound_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? 0);

/**
 * `fn` with a store whose writes go to the click endpoint and a time just ahead (after the
 * writer's window starts). A writer knows only its own batch rows: the earlier tests' are removed,
 * or they would read as another writer's.
 */
async function onStore(url: string, fn: (store: Store, base: number) => Promise<void>): Promise<void> {
  const store = createStore(url, sink);
  try {
    await store.db.deleteFrom('notify_tracking_batches').execute();
    await fn(store, Date.now() + 10_000);
  } finally {
    await store.close();
  }
}

forEachEngine('a batch of clicks alone', (h) => {
  const a = useNotify(h);

  test('the one-statement path leaves the rows the transaction leaves: two clicks of one send, a send with no open, too soon, unknown', () =>
    onStore(h.url, async (store, base) => {
      const batch = (s: Awaited<ReturnType<typeof sends>>) => {
        const [noOpen, justSent, clicked, oneOff] = s.all.map((x) => x.token);
        return [
          click(noOpen, base + 100, 0, { metadata: { ip: '10.1.2.3' } }),
          click(noOpen, base + 50, 1, { userAgent: 'curl/8.5' }),
          click(justSent, base, 0),
          click(clicked, base + 200, 2),
          click(oneOff, base + 300, 0, { method: 'HEAD' }),
          click('unknownunknownunknown0', base + 10, 0),
        ];
      };
      const fast = writer(store);
      const viaStatement = await sends(a(), base);
      const outboxBefore = await lastOutbox(store);
      const r1 = await fast.repo.applyBatch(batch(viaStatement), label, `bat_fast_${base}`);
      const fastOutbox = await outboxOf(store, outboxBefore);
      const general = writer(store, true);
      const viaTransaction = await sends(a(), base);
      const between = await lastOutbox(store);
      const r2 = await general.repo.applyBatch(batch(viaTransaction), label, `bat_general_${base}`);
      const generalOutbox = await outboxOf(store, between);

      if (h.engine === 'postgres') assert.equal(fast.written.statement, 1, 'PostgreSQL wrote the batch in one statement');
      assert.deepEqual(r1, r2);
      assert.deepEqual(r1, { inserted: 5, unknown: 1, firstOpens: 0, firstClicks: 3 });
      const [got, want] = [await stateOf(store, viaStatement), await stateOf(store, viaTransaction)];
      assert.deepEqual(got, want);
      assert.deepEqual(got.counters, [0, 0, 2, 1], 'the campaign: two first clicks, one of them human (the one-off send counts for no campaign)');
      assert.deepEqual(got.firsts, [
        [0, base + 50, base + 100, null],
        [1, base, null, base - 2_000],
        [2, base - 500, base - 500, null],
        [3, base + 300, null, null],
      ]);
      assert.deepEqual(
        got.events.map((e) => [e[0], e[3], e[5], e[6]]),
        [
          [0, 0, 0, null],
          [0, 1, 1, 'bot_user_agent'],
          [1, 0, 1, 'too_soon_after_delivery'],
          [2, 2, 0, null],
          [3, 0, 1, 'head_request'],
        ],
      );
      for (const out of [fastOutbox, generalOutbox]) {
        assert.equal(out.length, 1, 'one outbox row per batch for the endpoint');
        assert.deepEqual([out[0].endpoint, out[0].type, out[0].range.upTo - out[0].range.after], [ENDPOINT, TRACKED_TYPES.click, 5]);
      }
      const ids = (await Promise.all(viaStatement.all.map((s) => eventsOf(store, s.id)))).flat().map((e) => Number(e.id));
      assert.deepEqual([Math.min(...ids) - 1, Math.max(...ids)], [fastOutbox[0].range.after, fastOutbox[0].range.upTo], 'the range names the batch events');
    }));

  test("clicks that may make a link burst, with this batch or the writer's earlier clicks, take the general path and are relabelled", () =>
    onStore(h.url, async (store, base) => {
      const w = writer(store);
      const s = await sends(a(), base);
      const [noOpen, , , oneOff] = s.all.map((x) => x.token);
      await w.repo.applyBatch([click(noOpen, base, 0), click(noOpen, base + 100, 1)], label);
      const first = w.written.statement;
      await w.repo.applyBatch([click(noOpen, base + 200, 2)], label);
      assert.equal(w.written.statement, first, 'the third link within the window is not written by the statement');
      const events = await eventsOf(store, s.all[0].id);
      assert.deepEqual(
        events.map((e) => e.machine_reason),
        ['link_burst', 'link_burst', 'link_burst'],
      );
      assert.equal((await sendRow(store, s.all[0].id)).human_clicked_at, null, 'the burst gave its human click back');
      await w.repo.applyBatch([click(oneOff, base + 300, 0), click(oneOff, base + 310, 1), click(oneOff, base + 320, 2)], label);
      assert.equal(w.written.statement, first, 'three links of one send in the batch: the general path');
      assert.deepEqual(
        (await eventsOf(store, s.all[3].id)).map((e) => e.machine_reason),
        ['link_burst', 'link_burst', 'link_burst'],
      );
      if (h.engine === 'postgres') assert.equal(first, 1, 'the first two links went through the statement');
    }));

  test("another writer's batch since the window's start: the statement writes nothing and the general path writes the batch once", () =>
    onStore(h.url, async (store, base) => {
      const w = writer(store);
      const s = await sends(a(), base);
      await store.db.insertInto('notify_tracking_batches').values({ id: `bat_other_${base}`, events: 1, created_at: Date.now() }).execute();
      const r = await w.repo.applyBatch([click(s.all[0].token, base, 0)], label, `bat_mine_${base}`);
      assert.deepEqual(r, { inserted: 1, unknown: 0, firstOpens: 0, firstClicks: 1 });
      assert.equal(w.written.statement, 0);
      assert.equal((await eventsOf(store, s.all[0].id)).length, 1);
      const batchRow = await store.db.selectFrom('notify_tracking_batches').select('events').where('id', '=', `bat_mine_${base}`).executeTakeFirstOrThrow();
      assert.equal(Number(batchRow.events), 1);
    }));
});
