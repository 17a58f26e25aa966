import type { Store } from '../core/storage/index.ts';
import type { PacingStore } from './contract.ts';

/** Turns in notify_send_pacing: every worker on the same database shares them. */
export function createDatabasePacing(store: Pick<Store, 'pacing'>): PacingStore {
  return { kind: 'database', take: (rules, now) => store.pacing.take(rules, now), close: async () => {} };
}
