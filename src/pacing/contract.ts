import type { PaceRule, Turn } from '../core/pacer.ts';

/**
 * Where sending turns are kept. One store per instance, named by `rateLimitStore` like the capture
 * rate limits: memory.ts (this process only), redis.ts and database.ts (every worker pointed at the
 * same server shares the turns, so `sendRate` holds over the whole fleet). Each applies takeTurn
 * (core/pacer.ts) atomically over all the rules of one message.
 */
export interface PacingStore {
  readonly kind: 'memory' | 'redis' | 'database';
  /**
   * taken: the message may leave in `waitMs` (0 = now) and the turn counts as in flight under
   * `turnId`; else nothing is taken and it asks again in `waitMs`
   */
  take(rules: readonly PaceRule[], now: number, turnId: string): Promise<Turn>;
  /** the turn's message has left (or failed) at `at`: it counts one window more */
  done(rules: readonly PaceRule[], turnId: string, at: number): Promise<void>;
  close(): Promise<void>;
}
