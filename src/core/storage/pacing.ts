import type { PaceRule, Turn } from '../pacer.ts';

export interface PacingRepo {
  /**
   * takeTurn (core/pacer.ts) over the keys' stored next turns, in one transaction: several
   * processes never take the same turn.
   */
  take(rules: readonly PaceRule[], now: number): Promise<Turn>;
}
