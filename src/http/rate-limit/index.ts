import type { Context } from '../../context.ts';
import type { LimiterStore } from './contract.ts';
import { limiterStores } from './registry.ts';

export type { LimitDecision, Limiter, LimiterStore, LimitRule } from './contract.ts';
export { type LimiterStoreDeps, limiterStores } from './registry.ts';

/** The store named by `rateLimitStore`: `memory` (default), `database`, or `redis://...`. */
export function createLimiterStore(ctx: Pick<Context, 'config' | 'store' | 'clock' | 'log'>): LimiterStore {
  return limiterStores.create(ctx.config.rateLimitStore, ctx);
}
