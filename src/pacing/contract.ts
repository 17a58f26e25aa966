import type { PaceRule, Turn } from '../core/pacer.ts';

/**
 * Where sending turns are kept. One store per instance, named by `rateLimitStore` like the capture
 * rate limits: memory.ts (this process only), redis.ts and database.ts (every worker pointed at the
 * same server shares the turns, so `sendRate` holds over the whole fleet). Each applies takeTurn
 * (core/pacer.ts) atomically over all the rules of one message.
 */
export interface PacingStore {
  readonly kind: 'memory' | 'redis' | 'database';
  /** taken: the message may leave in `waitMs` (0 = now); else nothing is taken and it asks again in `waitMs` */
  take(rules: readonly PaceRule[], now: number): Promise<Turn>;
  close(): Promise<void>;
}
