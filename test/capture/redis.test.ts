import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createNotify, type Notify } from '../../src/notify.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { serve } from '../helpers/http.ts';
import { AJAX, form, postFrom } from './helpers.ts';

const REDIS_URL = process.env.NOTIFY_TEST_REDIS_URL;
const LIMIT = 3;

/** Two servers with their own databases: the only thing they share is Redis. */
async function twoServers(rateLimitStore: string) {
  const dbs = [freshDatabaseUrl('sqlite'), freshDatabaseUrl('sqlite')];
  const instances: Notify[] = [];
  for (const db of dbs) instances.push(await createNotify(testOptions(db.url, { captureRateLimit: LIMIT, rateLimitStore })));
  const servers = await Promise.all(instances.map((n) => serve(n)));
  return {
    urls: servers.map((s) => `${s.url}/notify/capture`),
    instances,
    async close() {
      for (const s of servers) await s.close();
      for (const n of instances) await n.close();
      for (const db of dbs) db.cleanup();
    },
  };
}

// Like PostgreSQL: without NOTIFY_TEST_REDIS_URL this suite does not run; with it, an unreachable Redis fails it.
describe('Redis rate-limit store', { skip: REDIS_URL ? false : 'NOTIFY_TEST_REDIS_URL is not set' }, () => {
  const prefix = `notify-test:${process.pid}:${Date.now().toString(36)}:`;
  let redis: Redis;
  let pair: Awaited<ReturnType<typeof twoServers>>;
  before(async () => {
    redis = new Redis(REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
    redis.on('error', () => {}); // reported by connect() below
    await redis.connect(); // throws when Redis is unreachable: the suite fails, it is not skipped
    assert.equal(await redis.ping(), 'PONG');
    const url = new URL(REDIS_URL!);
    url.searchParams.set('prefix', prefix);
    pair = await twoServers(url.toString());
  });
  after(async () => {
    await pair?.close();
    if (redis?.status === 'ready') {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });

  test('the limit holds across two server instances sharing Redis', async () => {
    const [a, b] = pair.urls;
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await postFrom(i % 2 ? b : a, form({ email: `redis${i}@example.com` }), { from: '127.0.0.5', headers: AJAX });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.ok((await redis.keys(`${prefix}capture:ip*`)).length >= 1, 'the count lives in Redis under the run prefix');
    const other = await postFrom(b, form({ email: 'redis-other@example.com' }), { from: '127.0.0.6', headers: AJAX });
    assert.equal(other.status, 200, 'another IP passes');
  });
});

describe('Redis rate-limit store while Redis is down', () => {
  let pair: Awaited<ReturnType<typeof twoServers>>;
  before(async () => {
    pair = await twoServers('redis://127.0.0.1:1?prefix=down:'); // nothing listens on port 1
  });
  after(() => pair.close());

  test('each instance keeps limiting in memory instead of failing or letting everything through', async () => {
    const [a] = pair.urls;
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await postFrom(a, form({ email: `down${i}@example.com` }), { from: '127.0.0.7', headers: AJAX })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.ok(Date.now() - started < 5000, 'no request waits for Redis');
  });
});
