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
  const client = new Redis(parsed.toString(), {
    // Fail fast instead of queueing hits while disconnected; the memory fallback takes them.
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    lazyConnect: false,
  });
  let warned = false;
  client.on('error', (err) => {
    if (!warned) log.warn({ err: err.message }, 'rate limit: Redis unreachable, counting in memory until it is back');
    warned = true;
  });
  client.on('ready', () => {
    warned = false;
  });
  return {
    kind: 'redis',
    limiter(rule: LimitRule): Limiter {
      const fallback = memoryLimiter(rule, `${prefix}:fallback`);
      const rl = new RateLimiterRedis({ storeClient: client, keyPrefix: `${prefix}:${rule.name}`, points: rule.points, duration: rule.windowSec });
      return {
        rule,
        async consume(key) {
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
