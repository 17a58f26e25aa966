import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { manualClock } from '../../src/core/clock.ts';
import type { LimiterStore, LimitRule } from '../../src/http/rate-limit/index.ts';
import { limiterStores } from '../../src/http/rate-limit/registry.ts';
import { createStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/contract.ts';
import { ENGINES, freshDatabaseUrl } from '../helpers/engines.ts';
import { quiet, settlesTo } from '../helpers/handles.ts';

/**
 * One contract for every rate-limit store. A store joins by adding one case below: how to reach
 * its backend, and how to build an instance on it through the registry (as `rateLimitStore` does).
 */
interface Backend {
  /** a new store instance on this backend, built through the registry */
  open(): LimiterStore;
  /** whether instances on this backend share one count (a fleet), or count per process */
  shared: boolean;
  /** lets `ms` pass: moves the clock where the store reads one, else waits */
  elapse(ms: number): Promise<void>;
  /** closes what the case opened for the backend */
  dispose(): Promise<void>;
}

interface StoreCase {
  name: string;
  /** why the case cannot run here, if it cannot */
  skip?: string;
  make(): Promise<Backend>;
}

const log = pino({ level: 'silent' });
const REDIS_URL = process.env.NOTIFY_TEST_REDIS_URL;
const noDatabase = { store: undefined as never, clock: manualClock(), log };
const realTime = { elapse: (ms: number) => sleep(ms) };

/** Redis under a run-unique key prefix, removed afterwards; an unreachable Redis fails (it is not skipped). */
async function redisBackend(): Promise<Backend> {
  const admin = new Redis(REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  admin.on('error', () => {}); // reported by connect() below
  await admin.connect();
  const url = new URL(REDIS_URL!);
  const prefix = `notify-contract:${process.pid}:${Date.now().toString(36)}:`;
  url.searchParams.set('prefix', prefix);
  return {
    open: () => limiterStores.create(url.toString(), noDatabase),
    shared: true,
    ...realTime,
    async dispose() {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length) await admin.del(...keys);
      admin.disconnect();
    },
  };
}

/** The database store on a fresh schema; instances take turns between two connections, as two servers would. */
function databaseCase(engine: (typeof ENGINES)[number]): StoreCase {
  return {
    name: `database [${engine}]`,
    async make() {
      const db = freshDatabaseUrl(engine);
      const clock = manualClock();
      const connections: Store[] = [createStore(db.url), createStore(db.url)];
      await connections[0].migrate();
      let turn = 0;
      return {
        open: () => limiterStores.create('database', { store: connections[turn++ % 2], clock, log }),
        shared: true,
        async elapse(ms) {
          clock.advance(ms);
        },
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
  { name: 'memory', make: async () => ({ open: () => limiterStores.create('memory', noDatabase), shared: false, ...realTime, dispose: async () => {} }) },
  { name: 'redis', skip: REDIS_URL ? undefined : 'NOTIFY_TEST_REDIS_URL is not set', make: redisBackend },
  ...ENGINES.map(databaseCase),
];

let ruleSeq = 0;
/** A rule of its own per test, so no test sees another's hits. */
const rule = (points: number, windowSec = 60): LimitRule => ({ name: `contract-${++ruleSeq}`, points, windowSec });

for (const c of CASES) {
  describe(`rate-limit store contract: ${c.name}`, { skip: c.skip ?? false }, () => {
    let backend: Backend;
    const opened: LimiterStore[] = [];
    /** an instance closed after the block */
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

    test('points are allowed, then refused with the seconds to wait', async () => {
      const r = rule(3);
      const limiter = open().limiter(r);
      assert.equal(limiter.rule, r);
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await limiter.consume('client'));
      assert.deepEqual(decisions.map((d) => [d.allowed, d.remaining]), [[true, 2], [true, 1], [true, 0], [false, 0], [false, 0]]);
      for (const refused of decisions.slice(3)) assert.ok(refused.retryAfterSec >= 1 && refused.retryAfterSec <= 60, `retryAfterSec ${refused.retryAfterSec}`);
    });

    test('a new window starts once the old one has passed', async () => {
      const limiter = open().limiter(rule(1, 1));
      assert.equal((await limiter.consume('client')).allowed, true);
      assert.equal((await limiter.consume('client')).allowed, false);
      await backend.elapse(1200);
      const fresh = await limiter.consume('client');
      assert.deepEqual([fresh.allowed, fresh.remaining], [true, 0]);
    });

    test('keys and rules are counted independently', async () => {
      const store = open();
      const one = store.limiter(rule(1));
      const other = store.limiter(rule(1));
      assert.equal((await one.consume('a')).allowed, true);
      assert.equal((await one.consume('a')).allowed, false);
      assert.equal((await one.consume('b')).allowed, true, 'another key of the same rule');
      assert.equal((await other.consume('a')).allowed, true, 'the same key under another rule');
    });

    test('two instances on the same backend share one count', async (ctx) => {
      if (!backend.shared) return ctx.skip('this store counts per process');
      const r = rule(3);
      const a = open().limiter(r);
      const b = open().limiter(r);
      const allowed = [];
      for (const limiter of [a, b, a, b, a]) allowed.push((await limiter.consume('shared')).allowed);
      assert.deepEqual(allowed, [true, true, true, false, false]);
    });

    test('close() releases every connection and timer the store opened', async () => {
      const baseline = await quiet();
      const store = backend.open();
      await store.limiter(rule(5)).consume('client');
      await store.close();
      assert.deepEqual(await settlesTo(baseline), baseline);
    });
  });
}
