import type { Clock } from '../../core/clock.ts';
import type { Store } from '../../core/storage/index.ts';
import { decide, type LimiterStore } from './contract.ts';

const PURGE_EVERY = 500;

/**
 * Fixed windows in notify_rate_limits (migration 007): every instance on the same database shares
 * the count. Time comes from the injected clock, so tests move time instead of sleeping.
 */
export function createDatabaseStore(store: Store, clock: Clock): LimiterStore {
  let hitsSincePurge = 0;
  return {
    kind: 'database',
    limiter(rule) {
      return {
        rule,
        async consume(key) {
          const now = clock.now();
          const { hits, resetAt } = await store.rateLimits.hit(`${rule.name}:${key}`, rule.windowSec * 1000, now);
          // Ended windows are deleted now and then, so the table stays as small as the live windows.
          if (++hitsSincePurge >= PURGE_EVERY) {
            hitsSincePurge = 0;
            await store.rateLimits.purge(now);
          }
          return decide(rule, hits, resetAt - now);
        },
      };
    },
    close: async () => {},
  };
}
