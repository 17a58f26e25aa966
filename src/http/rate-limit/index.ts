import type { Context } from '../../context.ts';
import type { LimiterStore } from './contract.ts';
import { createDatabaseStore } from './database.ts';
import { createMemoryStore } from './memory.ts';
import { createRedisStore } from './redis.ts';

export type { LimitDecision, Limiter, LimiterStore, LimitRule } from './contract.ts';

/** The store named by `rateLimitStore`: `memory` (default), `database`, or `redis://...`. */
export function createLimiterStore(ctx: Pick<Context, 'config' | 'store' | 'clock' | 'log'>): LimiterStore {
  const spec = ctx.config.rateLimitStore;
  if (spec === 'database') return createDatabaseStore(ctx.store, ctx.clock);
  if (/^rediss?:\/\//.test(spec)) return createRedisStore(spec, ctx.log);
  return createMemoryStore();
}
