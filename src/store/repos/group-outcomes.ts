import type { SendOutcome } from '../../core/storage/sends.ts';
import type { FixedRun } from '../dialect.ts';
import type { Outbox } from '../outbox.ts';
import { outcomeRow } from './send-rows.ts';


/** one outcome on its row, while the row is still `sending` (a row reclaimed as interrupted keeps that) */
export const OUTCOME_SQLITE = "update notify_sends set status = ?, error = ?, message_id = ?, sent_at = ?, next_attempt_at = ?, updated_at = ? where id = ? and status = 'sending'";

/** the SQLite outcome statements of a group, one per send */
export const outcomeStatements = (outcomes: SendOutcome[], now: number): FixedRun[] =>
  outcomes.map((o) => {
    const r = outcomeRow(o, now);
    return { text: OUTCOME_SQLITE, parameters: [r.status, r.error, r.message_id, r.sent_at, r.next_attempt_at, r.updated_at, r.id] };
  });

/** PostgreSQL: every outcome of a group on its row (one JSON parameter), while the row is still `sending`; found by primary key only (`status || ''`: see START in send-groups.ts) */
export const FINISH_POSTGRES = `update notify_sends as s set status = x.status, error = x.error, message_id = x.message_id, sent_at = x.sent_at, next_attempt_at = x.next_attempt_at, updated_at = x.updated_at
  from jsonb_to_recordset(?::jsonb) as x(id bigint, status text, error text, message_id text, sent_at bigint, next_attempt_at bigint, updated_at bigint)
  where s.id = x.id and s.status || '' = 'sending'`;

/** an endpoint wants `notify:email.sent` or `.failed`: the outcomes then go through sends.finish, which writes those events */
export const outcomesAnnounced = (outbox: Outbox) => outbox.wants('notify:email.sent') || outbox.wants('notify:email.failed');
