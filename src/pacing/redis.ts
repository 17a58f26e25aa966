import type { Logger } from 'pino';
import { CATCH_UP_MS } from '../core/pacer.ts';
import { connectRedis } from '../redis-connection.ts';
import type { PacingStore } from './contract.ts';

/**
 * takeTurn (core/pacer.ts) as one Lua script, so it is atomic over all of a message's keys.
 * KEYS: the keys; ARGV: now, then each key's interval (ms), then the catch-up limit (ms).
 */
const TAKE = `
local now = tonumber(ARGV[1])
local catch = tonumber(ARGV[#KEYS + 2])
local wait = 0
local nexts = {}
for i, k in ipairs(KEYS) do
  nexts[i] = tonumber(redis.call('GET', k) or '0')
  if nexts[i] - now > wait then wait = nexts[i] - now end
end
if wait > 0 then return math.ceil(wait) end
for i, k in ipairs(KEYS) do
  local interval = tonumber(ARGV[i + 1])
  local base = now
  if now - nexts[i] <= math.min(catch, interval / 4) then base = nexts[i] end
  local n = base + interval
  redis.call('SET', k, string.format('%.3f', n), 'PX', math.ceil(n - now) + 60000)
end
return 0
`;

/** How long a worker waits before asking again while Redis is unreachable: it never sends unpaced. */
const RETRY_MS = 1000;

/** Turns under `<prefix>:pace:<key>` on the Redis the `rateLimitStore` URL names. */
export function createRedisPacing(url: string, log: Logger): PacingStore {
  const redis = connectRedis(url, log, 'send pacing (sending waits until it is back)');
  return {
    kind: 'redis',
    async take(rules, now) {
      await redis.firstConnect();
      try {
        const keys = rules.map((r) => redis.key(`pace:${r.key}`));
        const wait = await redis.client.eval(TAKE, keys.length, ...keys, now, ...rules.map((r) => r.intervalMs), CATCH_UP_MS);
        return Number(wait);
      } catch (err) {
        if (redis.warnOnce()) log.warn({ err: (err as Error).message }, 'send pacing: Redis command failed, sending waits until it is back');
        return RETRY_MS;
      }
    },
    async close() {
      redis.close();
    },
  };
}
