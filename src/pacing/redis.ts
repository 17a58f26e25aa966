import type { Logger } from 'pino';
import { CATCH_UP_MS, IN_FLIGHT_MS, WINDOW_MS } from '../core/pacer.ts';
import { connectRedis } from '../redis-connection.ts';
import type { PacingStore } from './contract.ts';

/**
 * takeTurn (core/pacer.ts) as one Lua script, so it is atomic over all of a message's keys.
 * KEYS: per rule its next-turn key and its sorted set of counted turns (score: until when).
 * ARGV: now, turn id, catch-up limit, in-flight time, then per rule interval, 1 when bookable,
 * perWindow. Answers { taken (0/1), whole milliseconds to wait }.
 */
const TAKE = `
local now = tonumber(ARGV[1])
local n = #KEYS / 2
local at, windowFree, othersFree, hasOther = now, now, true, false
local dues = {}
for i = 1, n do
  local live = KEYS[i * 2]
  local interval, bookable, perWindow = tonumber(ARGV[i * 3 + 2]), ARGV[i * 3 + 3] == '1', tonumber(ARGV[i * 3 + 4])
  dues[i] = tonumber(redis.call('GET', KEYS[i * 2 - 1]) or '0')
  if dues[i] > at then at = dues[i] end
  if not bookable then
    hasOther = true
    if dues[i] > now then othersFree = false end
  end
  redis.call('ZREMRANGEBYSCORE', live, '-inf', now)
  if redis.call('ZCARD', live) >= perWindow then
    local first = tonumber(redis.call('ZRANGE', live, 0, 0, 'WITHSCORES')[2])
    if first > windowFree then windowFree = first end
  end
end
if windowFree > now then return {0, math.max(1, math.ceil(math.min(windowFree - now, tonumber(ARGV[4]))))} end
if at > now and not (othersFree and hasOther) then return {0, math.ceil(at - now)} end
for i = 1, n do
  local interval = tonumber(ARGV[i * 3 + 2])
  local base = at
  if at - dues[i] <= math.min(tonumber(ARGV[3]), interval / 2) then base = dues[i] end
  local nextAt = base + interval
  redis.call('SET', KEYS[i * 2 - 1], string.format('%.3f', nextAt), 'PX', math.ceil(nextAt - now) + 60000)
  redis.call('ZADD', KEYS[i * 2], now + tonumber(ARGV[4]), ARGV[2])
  redis.call('PEXPIRE', KEYS[i * 2], tonumber(ARGV[4]) * 2)
end
return {1, math.ceil(at - now)}
`;

/** KEYS: the rules' sorted sets of counted turns; ARGV: until, turn id. Only turns still counted. */
const DONE = `
for _, live in ipairs(KEYS) do redis.call('ZADD', live, 'XX', ARGV[1], ARGV[2]) end
return 0
`;

/** How long a worker waits before asking again while Redis is unreachable: it never sends unpaced. */
const RETRY_MS = 1000;

/** Turns under `<prefix>:pace:<key>` on the Redis the `rateLimitStore` URL names. */
export function createRedisPacing(url: string, log: Logger): PacingStore {
  const redis = connectRedis(url, log, 'send pacing (sending waits until it is back)');
  const failed = (err: unknown) => {
    if (redis.warnOnce()) log.warn({ err: (err as Error).message }, 'send pacing: Redis command failed, sending waits until it is back');
  };
  return {
    kind: 'redis',
    async take(rules, now, turnId) {
      await redis.firstConnect();
      try {
        const keys = rules.flatMap((r) => [redis.key(`pace:${r.key}`), redis.key(`pace:${r.key}:live`)]);
        const args = rules.flatMap((r) => [r.intervalMs, r.bookable ? 1 : 0, r.perWindow]);
        const [taken, waitMs] = (await redis.client.eval(TAKE, keys.length, ...keys, now, turnId, CATCH_UP_MS, IN_FLIGHT_MS, ...args)) as [number, number];
        return { taken: taken === 1, waitMs };
      } catch (err) {
        failed(err);
        return { taken: false, waitMs: RETRY_MS };
      }
    },
    async done(rules, turnId, at) {
      const keys = rules.map((r) => redis.key(`pace:${r.key}:live`));
      // a lost report keeps the turn counted until its in-flight time ends: slower, never faster
      await redis.client.eval(DONE, keys.length, ...keys, Math.ceil(at + WINDOW_MS), turnId).catch(failed);
    },
    async close() {
      redis.close();
    },
  };
}
