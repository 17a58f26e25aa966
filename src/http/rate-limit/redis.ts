import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { decide, type Limiter, type LimiterStore, type LimitRule } from './contract.ts';
import { memoryLimiter } from './memory.ts';

/**
 * `redis://host:6379/0?prefix=myapp:` (or rediss://). Every instance pointed at the same Redis and
 * prefix shares one count. While Redis is unreachable each instance falls back to its own memory
 * count (logged), so capture keeps working and stays limited per instance rather than failing open.
 */
export function createRedisStore(url: string, log: Logger): LimiterStore {
  const parsed = new URL(url);
  const prefix = parsed.searchParams.get('prefix') || 'notify';
  parsed.searchParams.delete('prefix');
  const client = new Redis(parsed.toString(), { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000, disconnectTimeout: 200 });
  let warned = false;
  client.on('error', (err) => {
    if (!warned) log.warn({ err: err.message }, 'rate limit: Redis unreachable, counting in memory until it is back');
    warned = true;
  });
  client.on('ready', () => {
    warned = false;
  });
  // Hits that arrive while the first connection is being made wait for it (briefly); after that, a
  // hit never waits for a Redis that is down: it is counted in memory at once.
  let firstConnect: Promise<void> | undefined = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, 2000);
    timer.unref();
    client.once('ready', done);
    client.once('error', done);
  }).then(() => {
    firstConnect = undefined;
  });
  const limitKey = (name: string) => `${prefix}${prefix.endsWith(':') ? '' : ':'}${name}`;
  return {
    kind: 'redis',
    limiter(rule: LimitRule): Limiter {
      const fallback = memoryLimiter(rule, 'fallback');
      const rl = new RateLimiterRedis({ storeClient: client, keyPrefix: limitKey(rule.name), points: rule.points, duration: rule.windowSec, rejectIfRedisNotReady: true });
      return {
        rule,
        async consume(key) {
          if (firstConnect) await firstConnect;
          try {
            const res = await rl.consume(key);
            return decide(rule, res.consumedPoints, res.msBeforeNext);
          } catch (res) {
            if (res instanceof RateLimiterRes) return decide(rule, res.consumedPoints, res.msBeforeNext);
            if (!warned) log.warn({ err: (res as Error).message }, 'rate limit: Redis command failed, counting in memory');
            warned = true;
            return fallback.consume(key);
          }
        },
      };
    },
    async close() {
      client.disconnect();
    },
  };
}
