import { type Kysely, sql } from 'kysely';
import type { OutboundRepo, WaitingBatch } from '../../core/storage/outbound.ts';
import { columnList, type StoreDialect } from '../dialect.ts';
import { engagementData, engagementEventId, TRACKED_TYPES, TRACKING_BATCH, type TrackingRange } from '../outbox.ts';
import { toDate } from '../rows.ts';
import type { Database } from '../schema.ts';

/** The delivering side of the outbox: claims as for drip enrollments, settled only under the claim. */
export function createOutboundRepo(db: Kysely<Database>, dialect: StoreDialect): OutboundRepo {
  return {
    async claimDue(now, staleBefore, limit, claimToken) {
      const due = db
        .selectFrom('notify_outbound_events')
        .select('id')
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now)]),
            eb.and([eb('status', '=', 'delivering'), eb('locked_at', '<', staleBefore)]),
          ]),
        )
        .orderBy('next_attempt_at')
        .limit(limit);
      const rows = await db
        // A CTE with a row lock is materialised once (never re-run per row), so LIMIT holds.
        .with('due', () => dialect.lockForClaim(due))
        .updateTable('notify_outbound_events')
        .set((eb) => ({ status: 'delivering', claim_token: claimToken, locked_at: now, attempts: eb('attempts', '+', 1), updated_at: now }))
        .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
        .where((eb) => eb.or([eb('status', '=', 'pending'), eb.and([eb('status', '=', 'delivering'), eb('locked_at', '<', staleBefore)])]))
        .returning(['id', 'event_id', 'endpoint', 'type', 'body', 'attempts', 'created_at'])
        .execute();
      return rows
        .map((r) => ({ id: Number(r.id), event_id: r.event_id, endpoint: r.endpoint, type: r.type, body: r.body, attempts: Number(r.attempts), created_at: Number(r.created_at) }))
        .sort((a, b) => a.id - b.id);
    },
    async settle(id, claimToken, result, now) {
      const res = await db
        .updateTable('notify_outbound_events')
        .set({
          status: result.status,
          claim_token: null,
          locked_at: null,
          updated_at: now,
          ...(result.status === 'delivered' ? { delivered_at: now, last_error: null } : { last_error: result.error.slice(0, 500) }),
          ...(result.status === 'pending' ? { next_attempt_at: result.nextAttemptAt } : {}),
        })
        .where('id', '=', id)
        .where('status', '=', 'delivering')
        .where('claim_token', '=', claimToken)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async recent(filter, limit) {
      let q = db.selectFrom('notify_outbound_events').selectAll();
      if (filter.status) q = q.where('status', '=', filter.status);
      const rows = await q.orderBy('id', 'desc').limit(limit).execute();
      return rows.map((r) => ({
        id: Number(r.id),
        event_id: r.event_id,
        endpoint: r.endpoint,
        type: r.type,
        status: r.status,
        attempts: Number(r.attempts),
        next_attempt_at: toDate(r.next_attempt_at)!,
        last_error: r.last_error,
        delivered_at: toDate(r.delivered_at),
        created_at: toDate(r.created_at)!,
      }));
    },
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
    async prune(before, limit) {
      // settled (updated_at) before the cutoff implies due (next_attempt_at) before it: the index narrows
      const old = db
        .selectFrom('notify_outbound_events')
        .select('id')
        .where('status', 'in', ['delivered', 'dead'])
        .where('next_attempt_at', '<', before)
        .where('updated_at', '<', before)
        .limit(limit);
      const r = await db.deleteFrom('notify_outbound_events').where('id', 'in', old).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    async nextDueAt(staleAfterMs) {
      const pending = await db.selectFrom('notify_outbound_events').select((eb) => eb.fn.min('next_attempt_at').as('at')).where('status', 'in', ['pending', TRACKING_BATCH]).executeTakeFirst();
      const claimed = await db.selectFrom('notify_outbound_events').select((eb) => eb.fn.min('locked_at').as('at')).where('status', '=', 'delivering').executeTakeFirst();
      const times = [pending?.at, claimed?.at == null ? null : Number(claimed.at) + staleAfterMs].filter((t) => t !== null && t !== undefined).map(Number);
      return times.length > 0 ? Math.min(...times) : undefined;
    },
    async counts() {
      const rows = await db.selectFrom('notify_outbound_events').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
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
