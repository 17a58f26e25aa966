import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { CATCH_UP_MS, type PaceRule } from '../../src/core/pacer.ts';
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
const rules = (...intervals: number[]): PaceRule[] => intervals.map((intervalMs) => ({ key: `k${++keySeq}`, intervalMs }));
/** waits are whole milliseconds in Redis, fractional elsewhere */
const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) <= 1, `${what}: ${actual} ms, expected ${expected}`);

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
      assert.equal(await store.take(r, T0), 0);
      near(await store.take(r, T0), 50, 'at once');
      near(await store.take(r, T0 + 20), 30, '20 ms later');
      assert.equal(await store.take(r, T0 + 50), 0);
      near(await store.take(r, T0 + 50), 50, 'right after the second turn');
    });

    test('a waiting call takes nothing: asking often does not push the turn back', async () => {
      const store = open();
      const r = rules(100);
      assert.equal(await store.take(r, T0), 0);
      for (let t = 10; t < 100; t += 10) near(await store.take(r, T0 + t), 100 - t, `at +${t}`);
      assert.equal(await store.take(r, T0 + 100), 0);
    });

    test('every key of a message must be free, and the turn is taken on all of them at once', async () => {
      const store = open();
      const [global, gmail, other] = rules(50, 200, 200);
      assert.equal(await store.take([global, gmail], T0), 0);
      near(await store.take([global, other], T0 + 50 - 1), 1, 'the global key still busy');
      assert.equal(await store.take([global, other], T0 + 50), 0, 'another domain at the next global turn');
      near(await store.take([global, gmail], T0 + 100), 100, 'the domain key is busy until +200');
      // the refused gmail message above took no global turn: a third domain gets it
      assert.equal(await store.take([global, rules(200)[0]], T0 + 100), 0);
      assert.equal(await store.take([global, gmail], T0 + 200), 0);
    });

    test('a turn taken a little late keeps the schedule; one taken much later starts a new one', async () => {
      const store = open();
      const r = rules(100);
      assert.equal(await store.take(r, T0), 0);
      assert.equal(await store.take(r, T0 + 100 + CATCH_UP_MS - 5), 0, 'late by less than the catch-up');
      near(await store.take(r, T0 + 100 + CATCH_UP_MS - 5), 100 - CATCH_UP_MS + 5, 'the next turn is still at +200');
      assert.equal(await store.take(r, T0 + 1000), 0, 'after an idle time');
      near(await store.take(r, T0 + 1000), 100, 'no burst after idling: the next turn is a whole interval away');
    });

    test('fractional intervals do not drift: 1000 turns of 1000/7 ms end at 1000/7 s', async () => {
      const store = open();
      const r = rules(1000 / 7);
      let now = T0;
      for (let i = 0; i < 1000; i++) {
        const wait = await store.take(r, now);
        if (wait > 0) {
          now += wait;
          i--;
        }
      }
      assert.ok(Math.abs(now - T0 - (999 * 1000) / 7) <= 2, `last turn at +${now - T0} ms, expected ${(999 * 1000) / 7}`);
    });

    test('instances on the same backend share turns; of many asking at once exactly one gets it', async (ctx) => {
      if (!backend.shared) return ctx.skip('this store keeps turns per process');
      const r = rules(50);
      const stores = [open(), open(), open(), open()];
      const waits = await Promise.all(stores.flatMap((s) => [s.take(r, T0), s.take(r, T0)]));
      assert.equal(waits.filter((w) => w === 0).length, 1, `waits ${waits}`);
      near(await stores[3].take(r, T0 + 10), 40, 'another instance sees the taken turn');
    });

    test('close() releases every connection and timer the store opened', async () => {
      const baseline = await quiet();
      const store = backend.open();
      await store.take(rules(10), T0);
      await store.close();
      assert.deepEqual(await settlesTo(baseline), baseline);
    });
  });
}
