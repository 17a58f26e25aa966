import { type Kysely, sql } from 'kysely';
import type { OutboundRepo, WaitingBatch } from '../../core/storage/outbound.ts';
import { columnList, type StoreDialect } from '../dialect.ts';
import { engagementData, engagementEventId, TRACKED_TYPES, TRACKING_BATCH, type TrackingRange } from '../outbox.ts';
import { toDate } from '../rows.ts';
import type { Database } from '../schema.ts';

/** The outbox's tracking batch rows (one per batch and endpoint) and their expansion into one delivery per open or click. */
export function createOutboundExpansion(db: Kysely<Database>, dialect: StoreDialect): Pick<OutboundRepo, 'expandTracking' | 'waitingTracking'> {
  return {
    async expandTracking(limit, now) {
      let expanded = 0;
      while (expanded < limit) {
        const found = await dialect.writeTransaction(db, async (trx) => {
          const batch = await dialect
            .lockForClaim(trx.selectFrom('notify_outbound_events').select(['id', 'endpoint', 'type', 'body', 'next_attempt_at', 'created_at']).where('status', '=', TRACKING_BATCH).where('next_attempt_at', '<=', now).orderBy('id').limit(1))
            .executeTakeFirst();
          if (!batch) return false;
          await expandBatch(trx, dialect, { ...batch, next_attempt_at: Number(batch.next_attempt_at), created_at: Number(batch.created_at) });
          await trx.deleteFrom('notify_outbound_events').where('id', '=', batch.id).execute();
          return true;
        });
        if (!found) break;
        expanded++;
      }
      return expanded;
    },
    async waitingTracking(limit) {
      const batches = await db
        .selectFrom('notify_outbound_events')
        .select(['endpoint', 'type', 'body', 'next_attempt_at', 'created_at'])
        .where('status', '=', TRACKING_BATCH)
        .orderBy('id')
        .limit(limit)
        .execute();
      const out: WaitingBatch[] = [];
      for (const b of batches) {
        const kinds = kindsTaken(b.type);
        const n = kinds.length === 0 ? undefined : await rangeEvents(db, JSON.parse(b.body) as TrackingRange, kinds).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
        out.push({ endpoint: b.endpoint, types: b.type.split(','), events: Number(n?.n ?? 0), due: toDate(b.next_attempt_at)!, created_at: toDate(b.created_at)! });
      }
      return out;
    },
  };
}

const EXPANDED_PER_INSERT = 1000;

const DELIVERY_COLUMNS = columnList({ event_id: 'text', endpoint: 'text', type: 'text', body: 'text', next_attempt_at: 'bigint', created_at: 'bigint' });

/**
 * The deliveries of one tracking batch's opens and clicks to one endpoint, from the stored event
 * rows (their labels as stored now: final, once the batch is due; see LABELS_SETTLE_MS). An event already expanded (a concurrent batch's range held
 * it) keeps its row: the unique (event_id, endpoint) skips it.
 */
async function expandBatch(trx: Kysely<Database>, dialect: StoreDialect, batch: { endpoint: string; type: string; body: string; next_attempt_at: number; created_at: number }): Promise<void> {
  const kinds = kindsTaken(batch.type);
  if (kinds.length === 0) return;
  const events = await rangeEvents(trx, JSON.parse(batch.body) as TrackingRange, kinds)
    .select(['id', 'type', 'send_id', 'campaign_id', 'contact_id', 'link_index', 'is_machine', 'machine_reason', 'created_at'])
    .orderBy('id')
    .execute();
  const createdAt = new Date(batch.created_at).toISOString();
  const rows = events.map((e) => {
    const kind = e.type as TrackedKind;
    const id = engagementEventId(Number(e.id));
    const data = engagementData({
      type: kind,
      send: { id: Number(e.send_id), campaign_id: e.campaign_id === null ? null : Number(e.campaign_id), contact_id: e.contact_id === null ? null : Number(e.contact_id) },
      at: Number(e.created_at),
      link_index: e.link_index === null ? null : Number(e.link_index),
      isMachine: Number(e.is_machine) === 1,
      reason: e.machine_reason,
    });
    const body = JSON.stringify({ id, type: TRACKED_TYPES[kind], created_at: createdAt, data });
    return { event_id: id, endpoint: batch.endpoint, type: TRACKED_TYPES[kind], body, next_attempt_at: batch.next_attempt_at, created_at: batch.created_at };
  });
  const names = sql.raw(DELIVERY_COLUMNS.map((c) => c.name).join(', '));
  for (let i = 0; i < rows.length; i += EXPANDED_PER_INSERT) {
    const chunk = JSON.stringify(rows.slice(i, i + EXPANDED_PER_INSERT));
    // `where true`: SQLite would read a bare ON CONFLICT after the SELECT's FROM as a join constraint
    await sql`insert into notify_outbound_events (${names}, status, attempts, updated_at) select ${names}, 'pending', 0, created_at from (${dialect.jsonRows(chunk, DELIVERY_COLUMNS)}) as x where true on conflict (event_id, endpoint) do nothing`.execute(trx);
  }
}

type TrackedKind = keyof typeof TRACKED_TYPES;

/** the event row types (open, click) a batch row's endpoint takes, from its `type` list */
function kindsTaken(types: string): TrackedKind[] {
  const takes = new Set(types.split(','));
  return (Object.keys(TRACKED_TYPES) as TrackedKind[]).filter((k) => takes.has(TRACKED_TYPES[k]));
}

/** the stored opens and clicks a batch row stands for */
function rangeEvents(db: Kysely<Database>, range: TrackingRange, kinds: TrackedKind[]) {
  return db.selectFrom('notify_events').where('id', '>', range.after).where('id', '<=', range.upTo).where('type', 'in', kinds).where('send_id', 'is not', null);
}
