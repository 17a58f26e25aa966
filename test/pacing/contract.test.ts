import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { CATCH_UP_MS, IN_FLIGHT_MS, type PaceRule, type Turn } from '../../src/core/pacer.ts';
import { limiterStores } from '../../src/http/rate-limit/registry.ts';
import { type PacingStore, pacingStores } from '../../src/pacing/index.ts';
import { createStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/contract.ts';
import { ENGINES, freshDatabaseUrl } from '../helpers/engines.ts';
import { quiet, settlesTo } from '../helpers/handles.ts';

/**
 * One contract for every pacing store. Time is the `now` each call passes (the pacer reads it from
 * the instance's clock), so every store, Redis included, runs on a made-up clock here: no sleeps.
 */
interface Backend {
  /** a new store instance on this backend, built through the registry as `rateLimitStore` does */
  open(): PacingStore;
  /** whether instances on this backend share turns (a fleet), or keep them per process */
  shared: boolean;
  dispose(): Promise<void>;
}

interface StoreCase {
  name: string;
  skip?: string;
  make(): Promise<Backend>;
}

const log = pino({ level: 'silent' });
const REDIS_URL = process.env.NOTIFY_TEST_REDIS_URL;
const noDatabase = { store: undefined as never, log };

async function redisBackend(): Promise<Backend> {
  const admin = new Redis(REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  admin.on('error', () => {});
  await admin.connect();
  const url = new URL(REDIS_URL!);
  const prefix = `notify-pacing:${process.pid}:${Date.now().toString(36)}:`;
  url.searchParams.set('prefix', prefix);
  return {
    open: () => pacingStores.create(url.toString(), noDatabase),
    shared: true,
    async dispose() {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length) await admin.del(...keys);
      admin.disconnect();
    },
  };
}

/** Instances take turns between two connections, as two workers would. */
function databaseCase(engine: (typeof ENGINES)[number]): StoreCase {
  return {
    name: `database [${engine}]`,
    async make() {
      const db = freshDatabaseUrl(engine);
      const connections: Store[] = [createStore(db.url), createStore(db.url)];
      await connections[0].migrate();
      let turn = 0;
      return {
        open: () => pacingStores.create('database', { store: connections[turn++ % 2], log }),
        shared: true,
        async dispose() {
          if (engine === 'postgres') await connections[0].dialect.destroyData();
          for (const s of connections) await s.close();
          db.cleanup();
        },
      };
    },
  };
}

const CASES: StoreCase[] = [
  { name: 'memory', make: async () => ({ open: () => pacingStores.create('memory', noDatabase), shared: false, dispose: async () => {} }) },
  { name: 'redis', skip: REDIS_URL ? undefined : 'NOTIFY_TEST_REDIS_URL is not set', make: redisBackend },
  ...ENGINES.map(databaseCase),
];

const T0 = Date.UTC(2026, 10, 24, 12);
let keySeq = 0;
/** rules with keys of their own per test, so no test sees another's turns */
const rules = (...intervals: number[]): PaceRule[] => intervals.map((intervalMs) => ({ key: `k${++keySeq}`, intervalMs, perWindow: 1000 }));
const shared = (intervalMs: number): PaceRule => ({ key: `k${++keySeq}`, intervalMs, perWindow: 1000, bookable: true });
let turnSeq = 0;
/** asks for a turn under a new turn id */
const ask = (store: PacingStore, r: PaceRule[], now: number) => store.take(r, now, `turn-${++turnSeq}`);
const TAKEN = { taken: true, waitMs: 0 };
/** asserts a turn; waits are whole milliseconds in Redis, fractional elsewhere */
function expectTurn(actual: Turn, taken: boolean, waitMs: number, what: string) {
  assert.ok(actual.taken === taken && Math.abs(actual.waitMs - waitMs) <= 1, `${what}: ${JSON.stringify(actual)}, expected taken ${taken} in ${waitMs} ms`);
}

test('pacing stores are named exactly as the rate-limit stores: one rateLimitStore option picks both', () => {
  assert.deepEqual(pacingStores.names, limiterStores.names);
  assert.deepEqual(pacingStores.forms, limiterStores.forms);
});

for (const c of CASES) {
  describe(`pacing store contract: ${c.name}`, { skip: c.skip ?? false }, () => {
    let backend: Backend;
    const opened: PacingStore[] = [];
    const open = () => {
      const store = backend.open();
      opened.push(store);
      return store;
    };
    before(async () => {
      backend = await c.make();
    });
    after(async () => {
      for (const store of opened) await store.close();
      await backend?.dispose();
    });

    test('the first turn is free; the next waits one interval; once it has passed the turn is taken', async () => {
      const store = open();
      const r = rules(50);
      assert.deepEqual(await ask(store, r, T0), TAKEN);
      expectTurn(await ask(store, r, T0), false, 50, 'at once');
      expectTurn(await ask(store, r, T0 + 20), false, 30, '20 ms later');
      assert.deepEqual(await ask(store, r, T0 + 50), TAKEN);
      expectTurn(await ask(store, r, T0 + 50), false, 50, 'right after the second turn');
    });

    test('a call that is not given the turn takes nothing: asking often does not push the turn back', async () => {
      const store = open();
      const r = rules(100);
      assert.deepEqual(await ask(store, r, T0), TAKEN);
      for (let t = 10; t < 100; t += 10) expectTurn(await ask(store, r, T0 + t), false, 100 - t, `at +${t}`);
      assert.deepEqual(await ask(store, r, T0 + 100), TAKEN);
    });

    test('every key of a message must be free; a busy domain takes nothing from the shared key', async () => {
      const store = open();
      const global = shared(50);
      const [gmail, other, third] = rules(200, 200, 200);
      assert.deepEqual(await ask(store, [global, gmail], T0), TAKEN);
      expectTurn(await ask(store, [global, gmail], T0 + 100), false, 100, 'gmail.com is busy until +200');
      assert.deepEqual(await ask(store, [global, other], T0 + 50), TAKEN, 'another domain at the next shared turn');
      assert.deepEqual(await ask(store, [global, third], T0 + 100), TAKEN, 'the refused gmail.com message booked nothing');
      assert.deepEqual(await ask(store, [global, gmail], T0 + 200), TAKEN);
    });

    test('a message whose domain is free books the next shared turn; one without a domain rule asks again', async () => {
      const store = open();
      const global = shared(50);
      const [gmail] = rules(200);
      assert.deepEqual(await ask(store, [global], T0), TAKEN);
      expectTurn(await ask(store, [global], T0 + 10), false, 40, 'no domain rule: not booked');
      expectTurn(await ask(store, [global, gmail], T0 + 10), true, 40, 'gmail.com free: booked at +50');
      expectTurn(await ask(store, [global], T0 + 50), false, 50, 'the booked turn is gone');
      expectTurn(await ask(store, [global, gmail], T0 + 60), false, 190, 'gmail.com counts from its booked turn');
      expectTurn(await ask(store, [global, rules(200)[0]], T0 + 60), true, 40, 'the next shared turn, at +100, booked by another domain');
    });

    test('a turn taken a little late keeps the schedule; one taken much later starts a new one', async () => {
      const store = open();
      const r = rules(100);
      assert.deepEqual(await ask(store, r, T0), TAKEN);
      assert.deepEqual(await ask(store, r, T0 + 100 + CATCH_UP_MS - 5), TAKEN, 'late by less than the catch-up');
      expectTurn(await ask(store, r, T0 + 100 + CATCH_UP_MS - 5), false, 100 - CATCH_UP_MS + 5, 'the next turn is still at +200');
      assert.deepEqual(await ask(store, r, T0 + 1000), TAKEN, 'after an idle time');
      expectTurn(await ask(store, r, T0 + 1000), false, 100, 'no burst after idling: the next turn is a whole interval away');
    });

    test('fractional intervals do not drift: 1000 turns of 1000/7 ms end at 999 x 1000/7 ms', async () => {
      const store = open();
      const r = rules(1000 / 7);
      let now = T0;
      for (let i = 0; i < 1000; ) {
        const turn = await ask(store, r, now);
        if (turn.taken) i++;
        else now += turn.waitMs;
      }
      assert.ok(Math.abs(now - T0 - (999 * 1000) / 7) <= 2, `last turn at +${now - T0} ms, expected ${(999 * 1000) / 7}`);
    });

    test('instances on the same backend share turns; of many asking at once exactly one gets it', async (ctx) => {
      if (!backend.shared) return ctx.skip('this store keeps turns per process');
      const r = rules(50);
      const stores = [open(), open(), open(), open()];
      const turns = await Promise.all(stores.flatMap((s) => [ask(s, r, T0), ask(s, r, T0)]));
      assert.equal(turns.filter((t) => t.taken).length, 1, JSON.stringify(turns));
      expectTurn(await ask(stores[3], r, T0 + 10), false, 40, 'another instance sees the taken turn');
    });

    test('at most perWindow turns count at once: a turn counts until a window after its message left', async () => {
      const store = open();
      const r: PaceRule[] = [{ key: `k${++keySeq}`, intervalMs: 10, perWindow: 3 }];
      for (const [i, t] of [0, 10, 20].entries()) assert.deepEqual(await store.take(r, T0 + t, `w${keySeq}-${i}`), TAKEN);
      expectTurn(await ask(store, r, T0 + 30), false, IN_FLIGHT_MS - 30, 'three in flight: wait for the first to end');
      // the first message left 200 ms after its turn: it counts until +1200
      await store.done(r, `w${keySeq}-0`, T0 + 200);
      expectTurn(await ask(store, r, T0 + 30), false, 1170, 'the window is full until +1200');
      expectTurn(await ask(store, r, T0 + 1199), false, 1, 'a millisecond before');
      assert.deepEqual(await ask(store, r, T0 + 1200), TAKEN);
      expectTurn(await ask(store, r, T0 + 1210), false, IN_FLIGHT_MS - 1200, 'full again: the second turn (+10) is still in flight');
    });

    test('a turn never reported done stops counting after the in-flight time; done for an ended turn changes nothing', async () => {
      const store = open();
      const r: PaceRule[] = [{ key: `k${++keySeq}`, intervalMs: 10, perWindow: 1 }];
      assert.deepEqual(await store.take(r, T0, 'lost'), TAKEN);
      expectTurn(await ask(store, r, T0 + 100), false, IN_FLIGHT_MS - 100, 'in flight');
      assert.deepEqual(await store.take(r, T0 + IN_FLIGHT_MS, 'next'), TAKEN);
      await store.done(r, 'lost', T0 + IN_FLIGHT_MS + 10);
      await store.done(r, 'next', T0 + IN_FLIGHT_MS + 20);
      expectTurn(await ask(store, r, T0 + IN_FLIGHT_MS + 30), false, 990, 'only the live turn counts');
    });

    test('close() releases every connection and timer the store opened', async () => {
      const baseline = await quiet();
      const store = backend.open();
      await ask(store, rules(10), T0);
      await store.close();
      assert.deepEqual(await settlesTo(baseline), baseline);
    });
  });
}
