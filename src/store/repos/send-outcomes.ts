import type { Kysely } from 'kysely';
import type { OutboundEvent } from '../../core/storage/outbound.ts';
import type { SendsRepo } from '../../core/storage/sends.ts';
import { columnList, type JsonRowColumn, type StoreDialect } from '../dialect.ts';
import { atomically, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { outcomeRow, type SendRow } from './send-rows.ts';

/** SendsRepo.finish: the outcomes of sends on their rows, with the events an endpoint wants of them. */
export function createSendFinisher(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): SendsRepo['finish'] {
  return async (outcomes, now) => {
    // one fixed-shape statement whatever the group's size and mix of statuses (see updateRows)
    const rows = outcomes.map((o) => outcomeRow(o, now));
    const update = (trx: Kysely<Database>) => dialect.updateRows(trx, 'notify_sends', OUTCOME_KEY, OUTCOME_COLUMNS, rows, { column: 'status', value: 'sending' });
    if (!(outbox.wants('notify:email.sent') || outbox.wants('notify:email.failed'))) return update(db);
    const { changed, events } = await atomically(db, async (trx) => {
      // the rows this call changes, held until it commits: exactly their outcomes are announced
      const before = await dialect.lockForUpdate(trx.selectFrom('notify_sends').selectAll().where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'sending')).execute();
      const changed = await update(trx);
      const written = new Map(rows.map((r) => [r.id, r]));
      const events = before.flatMap((r) => emailEvent({ ...r, ...written.get(Number(r.id)) } as SendRow, outbox));
      await outbox.write(trx, events, now);
      return { changed, events };
    });
    outbox.publish(events);
    return changed;
  };
}

/** `notify:email.sent` / `notify:email.failed` of a row whose outcome this call wrote, when wanted. */
function emailEvent(r: SendRow, outbox: Outbox): OutboundEvent[] {
  const type = r.status === 'sent' ? 'notify:email.sent' : r.status === 'failed' ? 'notify:email.failed' : undefined;
  if (!type || !outbox.wants(type)) return [];
  const data: Record<string, unknown> = {
    send: { id: Number(r.id), campaign_id: num(r.campaign_id), enrollment_id: num(r.enrollment_id), contact_id: num(r.contact_id), message_id: r.message_id },
    email: r.to_email,
    subject: r.subject,
  };
  if (type === 'notify:email.failed') data.error = r.error;
  return [{ type, data }];
}

const num = (v: number | null) => (v === null ? null : Number(v));

/** what an outcome writes on its send row, by id */
const OUTCOME_KEY: JsonRowColumn = { name: 'id', type: 'bigint' };
const OUTCOME_COLUMNS = columnList({ status: 'text', error: 'text', message_id: 'text', sent_at: 'bigint', next_attempt_at: 'bigint', updated_at: 'bigint' });
