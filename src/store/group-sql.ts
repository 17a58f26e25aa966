import type { CounterDeltas } from '../core/storage/counters.ts';
import { COUNTER_NAMES as NAMES } from '../core/storage/counters.ts';
import type { ClaimedSettlement } from '../core/storage/enrollments.ts';

/**
 * The send's contact still wants the campaign `k`: subscribed, and still a subscribed member of its
 * list when it has one (a one-click under unsubscribeScope 'list' leaves only that list). A run
 * claims a chunk ahead of handing it over, and throttled that is up to a minute: who left since is
 * not sent it. Both lookups are primary keys. `segment`: the campaign's segment as a condition on
 * `ct` (segment-predicate.ts), for a segment campaign.
 */
export const stillWanted = (send: string, segment = '') =>
  `exists (select 1 from notify_contacts ct where ct.id = ${send}.contact_id and ct.status = 'subscribed' and (k.list_id is null or exists (select 1 from notify_list_members m where m.list_id = k.list_id and m.contact_id = ct.id and m.status = 'subscribed'))${segment && ` and ${segment}`})`;

/** one enrollment's settlement, while this run's claim still holds it */
export const SETTLE_ONE =
  "update notify_enrollments set status = ?, step_index = ?, next_send_at = ?, attempts = ?, last_error = ?, claim_token = null, locked_at = null, updated_at = ? where id = ? and status = 'processing' and claim_token = ? returning id";

export const settleParameters = (s: ClaimedSettlement, now: number) => [s.status, s.step_index, s.next_send_at, s.attempts, s.last_error, now, s.id, s.claim_token];

/** whether a group moves a counter, and the values it adds (every counter, in COUNTER_NAMES order) */
export const counterValues = (counts: CounterDeltas) => ({ counted: NAMES.some((n) => counts[n]), values: NAMES.map((n) => counts[n] ?? 0) });

type Started = { id: number; attempts: number };

export const startedRows = (rows: unknown[] | undefined) => ((rows ?? []) as Started[]).map((r) => ({ id: Number(r.id), attempts: Number(r.attempts) }));
export const ids = (rows: unknown[] | undefined) => ((rows ?? []) as { id: number }[]).map((r) => Number(r.id));
export const idsOf = (rows: unknown[][]) => new Set(rows.flatMap((r) => (r as { id: number }[]).map((x) => Number(x.id))));
