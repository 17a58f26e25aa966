import type { Kysely } from 'kysely';
import { BURST_MIN_LINKS, BURST_WINDOW_MS } from '../../core/engagement.ts';
import type { TrackedEvent, TrackingBatchResult } from '../../core/storage/tracking-batches.ts';
import type { StoreDialect } from '../dialect.ts';
import type { ClicksBatch } from '../group-writes.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import type { BatchNotes, RecentClicks, WindowPlan } from './recent-clicks.ts';

/**
 * A batch of clicks alone in one statement (GroupWrites.writeClicks), when no send of it can be in a
 * link burst: that needs BURST_MIN_LINKS links of one send within the burst window, counted here
 * from the batch and this store's recent clicks (recent-clicks.ts), the statement checking that no
 * other writer stored a batch meanwhile. Undefined when the general path must write the batch.
 */
export async function clicksAlone(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, batch: ClicksBatch, recent: RecentClicks, notes: BatchNotes): Promise<TrackingBatchResult | undefined> {
  let since = Number.POSITIVE_INFINITY;
  for (const e of batch.events) if (e.at < since) since = e.at;
  const plan = recent.plan(since - BURST_WINDOW_MS);
  if (!plan || mayBurst(batch.events, plan, since - BURST_WINDOW_MS)) return undefined;
  const written = await dialect.writeClicks!(db, outbox, batch, { horizon: plan.horizon, batches: plan.mine });
  if (!written) return undefined;
  for (const e of batch.events) {
    const sendId = written.sends.get(e.token);
    if (sendId !== undefined) notes.click(sendId, e.link_index, e.at, e.token);
  }
  if (batch.batch) notes.row();
  return written.result;
}

/** whether some send of these clicks has BURST_MIN_LINKS links clicked since `since`, in the batch or the window */
function mayBurst(events: TrackedEvent[], plan: WindowPlan, since: number): boolean {
  const links = new Map<string, Set<number>>();
  for (const e of events) {
    let set = links.get(e.token);
    if (!set) {
      links.set(e.token, (set = new Set()));
      const sendId = plan.sendOf(e.token);
      if (sendId !== undefined) plan.window.linksSince(sendId, since, set);
    }
    if (e.link_index !== null) set.add(e.link_index);
    if (set.size >= BURST_MIN_LINKS) return true;
  }
  return false;
}
