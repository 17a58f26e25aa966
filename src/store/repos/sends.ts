import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { type NewSend, type SendOutcome, type SendsRepo, type StepSend, stepKey } from '../../core/storage/sends.ts';
import type { SendRecord, SendStatus, SuppressedRecipient } from '../../core/types.ts';
import { columnList, type JsonRowColumn, type StoreDialect } from '../dialect.ts';
import { toDate } from '../rows.ts';
import type { OutboundEvent } from '../../core/storage/outbound.ts';
import { atomically, type Outbox } from '../outbox.ts';
import type { Database, SendsTable } from '../schema.ts';

type Row = Selectable<SendsTable>;

export function toSendRecord(row: Row): SendRecord {
  return {
    id: Number(row.id),
    token: row.token,
    status: row.status as SendStatus,
    campaign_id: row.campaign_id === null ? null : Number(row.campaign_id),
    contact_id: row.contact_id === null ? null : Number(row.contact_id),
    enrollment_id: row.enrollment_id === null ? null : Number(row.enrollment_id),
    to_email: row.to_email,
    subject: row.subject,
    error: row.error,
    message_id: row.message_id,
    created_at: toDate(row.created_at)!,
    sent_at: toDate(row.sent_at),
    opened_at: toDate(row.opened_at),
    clicked_at: toDate(row.clicked_at),
    suppressed_recipients: listOf(row.suppressed_recipients) as SuppressedRecipient[],
    attempts: Number(row.attempts ?? 0),
    next_attempt_at: toDate(row.next_attempt_at),
  };
}

/** A JSON list column: text on SQLite, already parsed jsonb on PostgreSQL. */
function listOf(value: unknown): unknown[] {
  const parsed = typeof value === 'string' && value !== '' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? parsed : [];
}

const values = (r: NewSend, now: number) => ({
  token: r.token,
  campaign_id: r.campaign_id ?? null,
  contact_id: r.contact_id ?? null,
  enrollment_id: r.enrollment_id ?? null,
  step_id: r.step_id ?? null,
  step_index: r.step_index ?? null,
  to_email: r.to_email,
  subject: r.subject,
  status: r.status,
  error: r.error ?? null,
  suppressed_recipients: r.suppressed_recipients?.length ? JSON.stringify(r.suppressed_recipients) : null,
  created_at: now,
  updated_at: now,
});

export function createSendsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): SendsRepo {
  const one = async (where: 'id' | 'token' | 'message_id', v: string | number) => {
    const row = await db.selectFrom('notify_sends').selectAll().where(where, '=', v as never).executeTakeFirst();
    return row && toSendRecord(row);
  };
  /** inserts the rows no other run holds yet (the unique key decides) and returns those it inserted */
  const insertNew = async (rows: NewSend[], now: number, key: ['campaign_id', 'contact_id'] | ['enrollment_id', 'step_index'], attempts = 0) => {
    if (rows.length === 0) return [];
    const out = await db
      .insertInto('notify_sends')
      .values(rows.map((r) => ({ ...values(r, now), attempts })))
      .onConflict((oc) => oc.columns(key).doNothing())
      .returningAll()
      .execute();
    return out.map(toSendRecord);
  };
  return {
    async create(row, now) {
      return toSendRecord(await db.insertInto('notify_sends').values(values(row, now)).returningAll().executeTakeFirstOrThrow());
    },
    claim: (rows, now) => insertNew(rows, now, ['campaign_id', 'contact_id']),
    claimSteps: (rows, now) => insertNew(rows, now, ['enrollment_id', 'step_index']),
    async forSteps(steps) {
      const out = new Map<string, StepSend>();
      if (steps.length === 0) return out;
      const wanted = new Set(steps.map((s) => stepKey(s.enrollment_id, s.step_index)));
      const rows = await db
        .selectFrom('notify_sends')
        .selectAll()
        .where('enrollment_id', 'in', [...new Set(steps.map((s) => s.enrollment_id))])
        .execute();
      for (const r of rows) {
        const key = stepKey(Number(r.enrollment_id), Number(r.step_index));
        if (wanted.has(key)) out.set(key, { ...toSendRecord(r), step_index: Number(r.step_index), updated_at: Number(r.updated_at) });
      }
      return out;
    },
    async retake(id, now) {
      const res = await db
        .updateTable('notify_sends')
        .set({ status: 'queued', error: null, next_attempt_at: null, updated_at: now })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('status', '=', 'deferred'), eb.and([eb('status', '=', 'failed'), eb.or([eb('error', 'is', null), eb('error', '<>', 'interrupted')])])]))
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async interrupt(id, olderThan, now) {
      const res = await db
        .updateTable('notify_sends')
        .set({ status: 'failed', error: 'interrupted', updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'sending'])
        .where('updated_at', '<', olderThan)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async finish(outcomes, now) {
      // one fixed-shape statement whatever the group's size and mix of statuses (see updateRows)
      const rows = outcomes.map((o) => outcomeRow(o, now));
      const update = (trx: Kysely<Database>) => dialect.updateRows(trx, 'notify_sends', OUTCOME_KEY, OUTCOME_COLUMNS, rows, { column: 'status', value: 'sending' });
      if (!(outbox.wants('notify:email.sent') || outbox.wants('notify:email.failed'))) return update(db);
      const { changed, events } = await atomically(db, async (trx) => {
        // the rows this call changes, held until it commits: exactly their outcomes are announced
        const before = await dialect.lockForUpdate(trx.selectFrom('notify_sends').selectAll().where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'sending')).execute();
        const changed = await update(trx);
        const written = new Map(rows.map((r) => [r.id, r]));
        const events = before.flatMap((r) => emailEvent({ ...r, ...written.get(Number(r.id)) } as Row, outbox));
        await outbox.write(trx, events, now);
        return { changed, events };
      });
      outbox.publish(events);
      return changed;
    },
    async takeWaiting(campaignId, now, staleBefore, limit) {
      const waiting = (eb: ExpressionBuilder<Database, 'notify_sends'>) =>
        eb.and([
          eb('campaign_id', '=', campaignId),
          eb.or([
            eb.and([eb('status', '=', 'deferred'), eb('next_attempt_at', '<=', now)]),
            eb.and([eb('status', '=', 'queued'), eb('updated_at', '<', staleBefore)]),
          ]),
        ]);
      // the condition again outside the subquery: a row another run took meanwhile no longer meets it
      const rows = await db
        .updateTable('notify_sends')
        .set({ status: 'queued', updated_at: now })
        .where('id', 'in', db.selectFrom('notify_sends').select('id').where(waiting).orderBy('id').limit(limit))
        .where(waiting)
        .returningAll()
        .execute();
      return rows.map(toSendRecord).sort((a, b) => a.id - b.id);
    },
    async waiting(campaignId) {
      const row = await db
        .selectFrom('notify_sends')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('next_attempt_at').as('next')])
        .where('campaign_id', '=', campaignId)
        .where('status', 'in', ['deferred', 'queued'])
        .executeTakeFirst();
      const next = row?.next;
      return { count: Number(row?.n ?? 0), ...(next === null || next === undefined ? {} : { nextAttemptAt: Number(next) }) };
    },
    async cancelWaiting(scope, now) {
      let q = db.updateTable('notify_sends').set({ status: 'cancelled', next_attempt_at: null, updated_at: now });
      q = 'campaignId' in scope ? q.where('campaign_id', '=', scope.campaignId).where('status', 'in', ['deferred', 'queued']) : q.where('contact_id', '=', scope.contactId).where('enrollment_id', 'is not', null).where('status', 'in', ['deferred', 'queued']);
      return Number((await q.executeTakeFirst()).numUpdatedRows);
    },
    async suppressWaiting(contactId, now) {
      const rows = await db
        .updateTable('notify_sends')
        .set({ status: 'suppressed', error: null, next_attempt_at: null, updated_at: now })
        .where('contact_id', '=', contactId)
        .where('campaign_id', 'is not', null)
        .where('status', '=', 'deferred')
        .returning('campaign_id')
        .execute();
      const byCampaign = new Map<number, number>();
      for (const r of rows) byCampaign.set(Number(r.campaign_id), (byCampaign.get(Number(r.campaign_id)) ?? 0) + 1);
      return byCampaign;
    },
    async nextAttempt(after) {
      const row = await db
        .selectFrom('notify_sends as s')
        .innerJoin('notify_campaigns as c', 'c.id', 's.campaign_id')
        .select((eb) => eb.fn.min('s.next_attempt_at').as('t'))
        .where('s.status', '=', 'deferred')
        .where('s.next_attempt_at', '>', after)
        .where('c.status', '=', 'sending')
        .executeTakeFirst();
      return row?.t === null || row?.t === undefined ? undefined : Number(row.t);
    },
    async failStale(olderThan, now, campaignId) {
      let q = db
        .updateTable('notify_sends')
        .set({ status: 'failed', error: 'interrupted', updated_at: now })
        .where('status', '=', 'sending')
        .where('updated_at', '<', olderThan);
      if (campaignId !== undefined) q = q.where('campaign_id', '=', campaignId);
      const rows = await q.returning(['id', 'campaign_id']).execute();
      return rows.map((r) => ({ id: Number(r.id), campaign_id: r.campaign_id === null ? null : Number(r.campaign_id) }));
    },
    getById: (id) => one('id', id),
    getByToken: (token) => one('token', token),
    getByMessageId: (messageId) => one('message_id', messageId),
  };
}

/** what an outcome writes on its send row */
export const outcomeRow = (o: SendOutcome, now: number) => ({
  id: o.id,
  status: o.status,
  error: o.error ?? null,
  message_id: o.message_id ?? null,
  sent_at: o.status === 'sent' ? now : null,
  next_attempt_at: o.status === 'deferred' ? (o.next_attempt_at ?? now) : null,
  updated_at: now,
});

/** `notify:email.sent` / `notify:email.failed` of a row whose outcome this call wrote, when wanted. */
function emailEvent(r: Row, outbox: Outbox): OutboundEvent[] {
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
