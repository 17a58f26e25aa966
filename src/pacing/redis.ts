import type { Logger } from 'pino';
import { CATCH_UP_MS } from '../core/pacer.ts';
import { connectRedis } from '../redis-connection.ts';
import type { PacingStore } from './contract.ts';

/**
 * takeTurn (core/pacer.ts) as one Lua script, so it is atomic over all of a message's keys.
 * KEYS: the keys; ARGV: now, then per key its interval (ms) and 1 when bookable, then the
 * catch-up limit (ms). Answers { taken (0/1), whole milliseconds to wait }.
 */
const TAKE = `
local now = tonumber(ARGV[1])
local catch = tonumber(ARGV[#KEYS * 2 + 2])
local at = now
local othersFree = true
local hasOther = false
local dues = {}
for i, k in ipairs(KEYS) do
  dues[i] = tonumber(redis.call('GET', k) or '0')
  if dues[i] > at then at = dues[i] end
  if ARGV[i * 2 + 1] ~= '1' then
    hasOther = true
    if dues[i] > now then othersFree = false end
  end
end
if at > now and not (othersFree and hasOther) then return {0, math.ceil(at - now)} end
for i, k in ipairs(KEYS) do
  local interval = tonumber(ARGV[i * 2])
  local base = at
  if at - dues[i] <= math.min(catch, interval / 4) then base = dues[i] end
  local n = base + interval
  redis.call('SET', k, string.format('%.3f', n), 'PX', math.ceil(n - now) + 60000)
end
return {1, math.ceil(at - now)}
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
        const args = rules.flatMap((r) => [r.intervalMs, r.bookable ? 1 : 0]);
        const [taken, waitMs] = (await redis.client.eval(TAKE, keys.length, ...keys, now, ...args, CATCH_UP_MS)) as [number, number];
        return { taken: taken === 1, waitMs };
      } catch (err) {
        if (redis.warnOnce()) log.warn({ err: (err as Error).message }, 'send pacing: Redis command failed, sending waits until it is back');
        return { taken: false, waitMs: RETRY_MS };
      }
    },
    async close() {
      redis.close();
    },
  };
}
