import type { Store } from '../core/storage/index.ts';
import type { PacingStore } from './contract.ts';

/** Turns in notify_send_pacing(_turns): every worker on the same database shares them. */
export function createDatabasePacing(store: Pick<Store, 'pacing'>): PacingStore {
  return {
    kind: 'database',
    take: (rules, now, turnId) => store.pacing.take(rules, now, turnId),
    done: (rules, turnId, at) => store.pacing.done(rules, turnId, at),
    close: async () => {},
  };
}
