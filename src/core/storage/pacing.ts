import type { PaceRule } from '../pacer.ts';

export interface PacingRepo {
  /**
   * takeTurn (core/pacer.ts) over the keys' stored next turns, in one transaction: several
   * processes never take the same turn. Returns 0 when taken, else the milliseconds to wait.
   */
  take(rules: readonly PaceRule[], now: number): Promise<number>;
}
