import { type Kysely, sql } from 'kysely';
import { addDelta, type CounterDeltas } from '../../core/storage/counters.ts';
import type { SendRef } from '../../core/storage/tracking-batches.ts';
import type { Database } from '../schema.ts';

/** A send as a tracking batch reads it (locked): its first timestamps decide what the batch sets. */
export type SendRow = SendRef & { token: string } & Record<FirstColumn, number | null>;
export type FirstColumn = 'opened_at' | 'human_opened_at' | 'clicked_at' | 'human_clicked_at';
type First = { column: FirstColumn; human: boolean; counter: 'opened' | 'human_opened' | 'clicked' | 'human_clicked' };
const OPEN_FIRSTS: First[] = [
  { column: 'opened_at', human: false, counter: 'opened' },
  { column: 'human_opened_at', human: true, counter: 'human_opened' },
];
const CLICK_FIRSTS: First[] = [
  { column: 'clicked_at', human: false, counter: 'clicked' },
  { column: 'human_clicked_at', human: true, counter: 'human_clicked' },
];
const FIRSTS = [...OPEN_FIRSTS, ...CLICK_FIRSTS];
// Sends per first-timestamp UPDATE (2 bind parameters each in the CASE).
const CHUNK = 1000;

/**
 * The earliest time of each first timestamp a batch could set, by send. Only columns still null on
 * the send are noted: a repeat open of an opened send (most events) costs two comparisons and no
 * allocation.
 */
export class FirstTimes {
  readonly bySend = new Map<number, Partial<Record<FirstColumn, number>>>();

  note(type: 'open' | 'click', send: SendRow, isMachine: boolean, at: number): void {
    for (const c of type === 'open' ? OPEN_FIRSTS : CLICK_FIRSTS) {
      if (send[c.column] !== null || (c.human && isMachine)) continue;
      let f = this.bySend.get(send.id);
      if (!f) this.bySend.set(send.id, (f = {}));
      const held = f[c.column];
      if (held === undefined || at < held) f[c.column] = at;
    }
  }
}

/** Which first timestamps this batch sets (the rows are locked, so "still null" is decided here). */
export function newFirsts(firsts: FirstTimes, byId: Map<number, SendRow>) {
  const updates = new Map<FirstColumn, [number, number][]>();
  const deltas = new Map<number, CounterDeltas>();
  let firstOpens = 0;
  let firstClicks = 0;
  for (const [id, f] of firsts.bySend) {
    const send = byId.get(id)!;
    for (const c of FIRSTS) {
      const at = f[c.column];
      // null checked again: a burst found in this batch may have moved human_clicked_at meanwhile
      if (at === undefined || send[c.column] !== null) continue;
      const list = updates.get(c.column) ?? [];
      list.push([id, at]);
      updates.set(c.column, list);
      addDelta(deltas, send.campaign_id, { [c.counter]: 1 });
      if (c.column === 'opened_at') firstOpens++;
      if (c.column === 'clicked_at') firstClicks++;
    }
  }
  return { updates, deltas, firstOpens, firstClicks };
}

/** One UPDATE per chunk: `col = coalesce(col, case id when .. then .. end)`: a set value never moves. */
export async function setFirsts(trx: Kysely<Database>, updates: Map<FirstColumn, [number, number][]>): Promise<void> {
  const ids = [...new Set([...updates.values()].flatMap((pairs) => pairs.map(([id]) => id)))].sort((a, b) => a - b);
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = new Set(ids.slice(i, i + CHUNK));
    const set: Record<string, unknown> = {};
    for (const [column, pairs] of updates) {
      const mine = pairs.filter(([id]) => chunk.has(id));
      if (mine.length === 0) continue;
      const whens = sql.join(mine.map(([id, at]) => sql`when ${id} then cast(${at} as bigint)`), sql` `);
      set[column] = sql`coalesce(${sql.ref(column)}, case id ${whens} end)`;
    }
    await trx.updateTable('notify_sends').set(set).where('id', 'in', [...chunk]).execute();
  }
}
