import type { Kysely, Selectable } from 'kysely';
import type { OutboundDelivery, OutboundRepo, OutboundRow } from '../../core/storage/outbound.ts';
import type { StoreDialect } from '../dialect.ts';
import { TRACKING_BATCH } from '../outbox.ts';
import { toDate } from '../rows.ts';
import type { Database } from '../schema.ts';
import { createOutboundExpansion } from './outbound-expansion.ts';

/** The delivering side of the outbox: claims as for drip enrollments, settled only under the claim. */
export function createOutboundRepo(db: Kysely<Database>, dialect: StoreDialect): OutboundRepo {
  return {
    ...createOutboundExpansion(db, dialect),
    claimDue: (now, staleBefore, limit, claimToken) => claimDue(db, dialect, now, staleBefore, limit, claimToken),
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
      return rows.map(toOutboundRow);
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

/** Due deliveries (pending and due, or claimed by a worker that went stale) taken under this claim. */
async function claimDue(db: Kysely<Database>, dialect: StoreDialect, now: number, staleBefore: number, limit: number, claimToken: string): Promise<OutboundDelivery[]> {
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
}

function toOutboundRow(r: Selectable<Database['notify_outbound_events']>): OutboundRow {
  return {
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
  };
}
