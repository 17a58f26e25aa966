import type { Context } from '../context.ts';
import { Registry } from '../registry.ts';
import type { PacingStore } from './contract.ts';
import { createDatabasePacing } from './database.ts';
import { createMemoryPacing } from './memory.ts';
import { createRedisPacing } from './redis.ts';

export type PacingStoreDeps = Pick<Context, 'store' | 'log'>;

const url = /^\/\/\S+$/;

/** The same names as the capture rate limits' stores (http/rate-limit/registry.ts): one `rateLimitStore` option picks both. */
export const pacingStores = new Registry<PacingStoreDeps, PacingStore>('rateLimitStore')
  .register('memory', { usage: 'memory', create: () => createMemoryPacing() })
  .register('database', { usage: 'database', create: (_, d) => createDatabasePacing(d.store) })
  .register('redis', { usage: 'redis://...', argument: url, create: (spec, d) => createRedisPacing(spec, d.log) })
  .register('rediss', { usage: 'rediss://...', argument: url, create: (spec, d) => createRedisPacing(spec, d.log) });
