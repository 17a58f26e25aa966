import type { ExpressionBuilder, Kysely } from 'kysely';
import type { SendsRepo } from '../../core/storage/sends.ts';
import type { Database } from '../schema.ts';
import { toSendRecord } from './send-rows.ts';

/** The sends waiting for another try (deferred, or queued by a run that died): taken, counted, next due. */
export function createWaitingSends(db: Kysely<Database>): Pick<SendsRepo, 'takeWaiting' | 'waiting' | 'nextAttempt'> {
  return {
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
  };
}
