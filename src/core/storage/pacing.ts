import type { PaceRule, Turn } from '../pacer.ts';

export interface PacingRepo {
  /**
   * takeTurn (core/pacer.ts) over the keys' stored state, in one transaction: several processes
   * never take the same turn. A taken turn is recorded under `turnId` as in flight (counted until
   * `now + IN_FLIGHT_MS`).
   */
  take(rules: readonly PaceRule[], now: number, turnId: string): Promise<Turn>;
  /** the turn's message has left at `at`: it counts until `at + WINDOW_MS` */
  done(rules: readonly PaceRule[], turnId: string, at: number): Promise<void>;
}
