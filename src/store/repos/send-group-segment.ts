import type { Kysely } from 'kysely';
import { parseSegment, type Segment, type SegmentNode } from '../../core/segments.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';
import { type ContactsScope, segmentCondition } from '../segments.ts';

/**
 * Inside a group commit, before the start: the sends about to start whose contact no longer
 * matches the campaign's segment become `suppressed` (final, the retry's time and last error
 * cleared, as the list check does), so the audience is who matches when the message is handed
 * over, not when the chunk was claimed (a throttled or paced run holds a chunk for a minute or
 * more; a deferred send waits for its retry). Only while the campaign is `sending`: a paused
 * one's claims are given back, not settled. Returns the ids it suppressed.
 */
/** each run's segment parsed once, not once per group: a run hands every group the same object */
const parsed = new WeakMap<Segment, SegmentNode>();
function parsedOnce(segment: Segment): SegmentNode {
  let node = parsed.get(segment);
  if (!node) parsed.set(segment, (node = parseSegment(segment)));
  return node;
}

export async function suppressOutOfSegment(db: Kysely<Database>, dialect: StoreDialect, campaignId: number, sendIds: number[], segment: Segment, now: number): Promise<number[]> {
  if (sendIds.length === 0) return [];
  // validated at create; parsed again (once per run) so a stored filter never reaches SQL unchecked
  const node = parsedOnce(segment);
  const rows = await db
    .updateTable('notify_sends as w')
    .set({ status: 'suppressed', error: null, next_attempt_at: null, updated_at: now })
    .where('w.id', 'in', sendIds)
    .where('w.status', '=', 'queued')
    .where((eb) => eb.exists(eb.selectFrom('notify_campaigns as k').select('k.id').where('k.id', '=', campaignId).where('k.status', '=', 'sending')))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('notify_contacts as c')
            .select('c.id')
            .whereRef('c.id', '=', 'w.contact_id')
            .where((c) => segmentCondition(c as unknown as ContactsScope, dialect, node)),
        ),
      ),
    )
    // unqualified: SQLite's RETURNING does not take the table's alias
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id));
}
