import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import { type NewSend, type SendOutcome, type SendsRepo, type StepSend, stepKey } from '../../core/storage/sends.ts';
import type { SendRecord, SendStatus, SuppressedRecipient } from '../../core/types.ts';
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

export function createSendsRepo(db: Kysely<Database>, outbox: Outbox): SendsRepo {
  const one = async (where: 'id' | 'token' | 'message_id', v: string | number) => {
    const row = await db.selectFrom('notify_sends').selectAll().where(where, '=', v as never).executeTakeFirst();
    return row && toSendRecord(row);
  };
  return {
    async create(row, now) {
      return toSendRecord(await db.insertInto('notify_sends').values(values(row, now)).returningAll().executeTakeFirstOrThrow());
    },
    async claim(rows, now) {
      if (rows.length === 0) return [];
      const out = await db
        .insertInto('notify_sends')
        .values(rows.map((r) => values(r, now)))
        .onConflict((oc) => oc.columns(['campaign_id', 'contact_id']).doNothing())
        .returningAll()
        .execute();
      return out.map(toSendRecord);
    },
    async claimSteps(rows, now) {
      if (rows.length === 0) return [];
      const out = await db
        .insertInto('notify_sends')
        .values(rows.map((r) => values(r, now)))
        .onConflict((oc) => oc.columns(['enrollment_id', 'step_index']).doNothing())
        .returningAll()
        .execute();
      return out.map(toSendRecord);
    },
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
        .set({ status: 'sending', error: null, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'failed')
        .where((eb) => eb.or([eb('error', 'is', null), eb('error', '<>', 'interrupted')]))
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
      const announce = outbox.wants('notify:email.sent') || outbox.wants('notify:email.failed');
      const write = async (trx: Kysely<Database>) => {
        // one UPDATE per status (and, for deferred ones, per retry time): few distinct values per group
        const groups = new Map<string, SendOutcome[]>();
        for (const o of outcomes) {
          const key = `${o.status}:${o.status === 'deferred' ? o.next_attempt_at : ''}`;
          groups.set(key, [...(groups.get(key) ?? []), o]);
        }
        const rows: Row[] = [];
        let changed = 0;
        for (const group of groups.values()) for (let i = 0; i < group.length; i += 500) changed += await finishGroup(trx, group.slice(i, i + 500), now, announce ? rows : undefined);
        const events = rows.flatMap((r) => emailEvent(r, outbox));
        await outbox.write(trx, events, now);
        return { changed, events };
      };
      // without anyone to tell, the outcomes need no transaction of their own (the rows count, not their order)
      const { changed, events } = announce ? await atomically(db, write) : await write(db);
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

/**
 * One UPDATE for a group of outcomes with the same status (and retry time); per-row values through
 * CASE. The rows changed go into `rows` when given.
 */
async function finishGroup(db: Kysely<Database>, group: SendOutcome[], now: number, rows?: Row[]): Promise<number> {
  if (group.length === 0) return 0;
  const { status, next_attempt_at } = group[0];
  const ids = group.map((o) => o.id);
  const caseOf = (pick: (o: SendOutcome) => string | null | undefined) => {
    const whens = group.filter((o) => pick(o) != null).map((o) => sql`when ${o.id} then cast(${pick(o)} as text)`);
    return whens.length ? sql`case id ${sql.join(whens, sql` `)} else null end` : sql`null`;
  };
  const update = db
    .updateTable('notify_sends')
    .set({
      status,
      error: caseOf((o) => o.error) as never,
      message_id: caseOf((o) => o.message_id) as never,
      sent_at: status === 'sent' ? now : null,
      next_attempt_at: status === 'deferred' ? (next_attempt_at ?? now) : null,
      updated_at: now,
    })
    .where('id', 'in', ids)
    .where('status', '=', 'sending');
  if (rows) {
    const changed = await update.returningAll().execute();
    rows.push(...changed);
    return changed.length;
  }
  return Number((await update.executeTakeFirst()).numUpdatedRows);
}
