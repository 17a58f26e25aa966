import type { PaceRule } from '../core/pacer.ts';

/**
 * Where sending turns are kept. One store per instance, named by `rateLimitStore` like the capture
 * rate limits: memory.ts (this process only), redis.ts and database.ts (every worker pointed at the
 * same server shares the turns, so `sendRate` holds over the whole fleet). Each applies takeTurn
 * (core/pacer.ts) atomically over all the rules of one message.
 */
export interface PacingStore {
  readonly kind: 'memory' | 'redis' | 'database';
  /** 0 = the turn is taken; otherwise milliseconds until it may be, nothing taken */
  take(rules: readonly PaceRule[], now: number): Promise<number>;
  close(): Promise<void>;
}
