import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { connectRedis } from '../../redis-connection.ts';
import { decide, type Limiter, type LimiterStore, type LimitRule } from './contract.ts';
import { memoryLimiter } from './memory.ts';

/**
 * `redis://host:6379/0?prefix=myapp:` (or rediss://). Every instance pointed at the same Redis and
 * prefix shares one count. While Redis is unreachable each instance falls back to its own memory
 * count (logged), so capture keeps working and stays limited per instance rather than failing open.
 */
export function createRedisStore(url: string, log: Logger): LimiterStore {
  const redis = connectRedis(url, log, 'rate limit (counting in memory until it is back)');
  return {
    kind: 'redis',
    limiter(rule: LimitRule): Limiter {
      const fallback = memoryLimiter(rule, 'fallback');
      const rl = new RateLimiterRedis({ storeClient: redis.client, keyPrefix: redis.key(rule.name), points: rule.points, duration: rule.windowSec, rejectIfRedisNotReady: true });
      return {
        rule,
        async consume(key) {
          await redis.firstConnect();
          try {
            const res = await rl.consume(key);
            return decide(rule, res.consumedPoints, res.msBeforeNext);
          } catch (res) {
            if (res instanceof RateLimiterRes) return decide(rule, res.consumedPoints, res.msBeforeNext);
            if (redis.warnOnce()) log.warn({ err: (res as Error).message }, 'rate limit: Redis command failed, counting in memory');
            return fallback.consume(key);
          }
        },
      };
    },
    async close() {
      redis.close();
    },
  };
}
