import type { Context } from '../../context.ts';
import { Registry } from '../../registry.ts';
import type { LimiterStore } from './contract.ts';
import { createDatabaseStore } from './database.ts';
import { createMemoryStore } from './memory.ts';
import { createRedisStore } from './redis.ts';

/** What a store may need: the instance's database and clock (database), its logger (redis). */
export type LimiterStoreDeps = Pick<Context, 'store' | 'clock' | 'log'>;

const url = /^\/\/\S+$/;

/** The stores the `rateLimitStore` option can name; validation and messages follow from this list. */
export const limiterStores = new Registry<LimiterStoreDeps, LimiterStore>('rateLimitStore')
  .register('memory', { usage: 'memory', create: () => createMemoryStore() })
  .register('database', { usage: 'database', create: (_, d) => createDatabaseStore(d.store, d.clock) })
  .register('redis', { usage: 'redis://...', argument: url, create: (spec, d) => createRedisStore(spec, d.log) })
  .register('rediss', { usage: 'rediss://...', argument: url, create: (spec, d) => createRedisStore(spec, d.log) });
