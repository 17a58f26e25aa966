import { IN_FLIGHT_MS, type KeyState, takeTurn, WINDOW_MS } from '../core/pacer.ts';
import type { PacingStore } from './contract.ts';

/** One process: turns in maps. Enough for one worker; a fleet needs Redis or the database. */
export function createMemoryPacing(): PacingStore {
  const next = new Map<string, number>();
  /** per key: turn id -> until when it counts */
  const live = new Map<string, Map<string, number>>();
  const turnsOf = (key: string, now: number) => {
    let turns = live.get(key);
    if (!turns) live.set(key, (turns = new Map()));
    for (const [id, until] of turns) if (until <= now) turns.delete(id);
    return turns;
  };
  const stateOf = (key: string, now: number): KeyState => {
    const turns = turnsOf(key, now);
    return { next: next.get(key) ?? 0, live: turns.size, firstFree: Math.min(Number.POSITIVE_INFINITY, ...turns.values()) };
  };
  return {
    kind: 'memory',
    async take(rules, now, turnId) {
      const turn = takeTurn(rules, new Map(rules.map((r) => [r.key, stateOf(r.key, now)])), now);
      for (const [key, at] of turn.next ?? []) {
        next.set(key, at);
        turnsOf(key, now).set(turnId, now + IN_FLIGHT_MS);
      }
      return { taken: turn.taken, waitMs: turn.waitMs };
    },
    async done(rules, turnId, at) {
      for (const r of rules) if (live.get(r.key)?.has(turnId)) live.get(r.key)!.set(turnId, at + WINDOW_MS);
    },
    close: async () => {},
  };
}
