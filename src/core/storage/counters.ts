/** Per-campaign counters, so stats never scan the send rows. */
export const COUNTER_NAMES = ['total', 'sent', 'failed', 'suppressed', 'opened', 'clicked', 'human_opened', 'human_clicked', 'bounced', 'complained', 'unsubscribed'] as const;
export type CounterName = (typeof COUNTER_NAMES)[number];
export type CounterDeltas = Partial<Record<CounterName, number>>;
export type CounterValues = Record<CounterName, number>;

/**
 * Writers add deltas per flushed batch (one upsert per campaign), not per event, to keep row-lock
 * contention low.
 */
export interface CountersRepo {
  add(deltas: Map<number, CounterDeltas>): Promise<void>;
  get(campaignId: number): Promise<CounterValues>;
}

/** Adds `d` into the map entry for `campaignId` (batch writers collect deltas with this). */
export function addDelta(into: Map<number, CounterDeltas>, campaignId: number | null | undefined, d: CounterDeltas): void {
  if (campaignId === null || campaignId === undefined) return;
  const cur = into.get(campaignId) ?? {};
  for (const [k, v] of Object.entries(d) as [CounterName, number][]) cur[k] = (cur[k] ?? 0) + v;
  into.set(campaignId, cur);
}
