import type { Context } from '../context.ts';
import type { Pacer } from '../core/pacer.ts';
import { createPacer } from './pacer.ts';
import { pacingStores } from './registry.ts';

export type { PacingStore } from './contract.ts';
export { createPacer, normalizeDomain, type PaceLimits } from './pacer.ts';
export { type PacingStoreDeps, pacingStores } from './registry.ts';

/** The instance's pacer from `sendRate`, `domainRates` and `rateLimitStore`; undefined when unlimited (no store is opened). */
export function createInstancePacer(ctx: Pick<Context, 'config' | 'store' | 'clock' | 'log'>): Pacer | undefined {
  const { sendRate, domainRates, rateLimitStore } = ctx.config;
  if (sendRate <= 0 && Object.keys(domainRates).length === 0) return undefined;
  return createPacer({ sendRate, domainRates }, pacingStores.create(rateLimitStore, ctx), { clock: ctx.clock });
}
