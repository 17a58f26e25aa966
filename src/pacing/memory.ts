import { takeTurn } from '../core/pacer.ts';
import type { PacingStore } from './contract.ts';

/** One process: turns in a map. Enough for one worker; a fleet needs Redis or the database. */
export function createMemoryPacing(): PacingStore {
  const next = new Map<string, number>();
  return {
    kind: 'memory',
    async take(rules, now) {
      const turn = takeTurn(rules, next, now);
      for (const [key, at] of turn.next ?? []) next.set(key, at);
      return { taken: turn.taken, waitMs: turn.waitMs };
    },
    close: async () => {},
  };
}
