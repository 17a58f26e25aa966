import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { decide, type Limiter, type LimiterStore, type LimitRule } from './contract.ts';

/** One process only: the default, and the fallback of the Redis store while Redis is unreachable. */
export function memoryLimiter(rule: LimitRule, prefix = 'notify'): Limiter {
  const rl = new RateLimiterMemory({ keyPrefix: `${prefix}:${rule.name}`, points: rule.points, duration: rule.windowSec });
  return {
    rule,
    async consume(key) {
      try {
        const res = await rl.consume(key);
        return decide(rule, res.consumedPoints, res.msBeforeNext);
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        return decide(rule, res.consumedPoints, res.msBeforeNext);
      }
    },
  };
}

/** One counter per rule name: the admin sign-in and the API ask for the same rule and share its budget. */
export function createMemoryStore(): LimiterStore {
  const made = new Map<string, Limiter>();
  const limiter = (rule: LimitRule): Limiter => {
    let found = made.get(rule.name);
    if (!found) made.set(rule.name, (found = memoryLimiter(rule)));
    return found;
  };
  return { kind: 'memory', limiter, close: async () => {} };
}
