import type { Kysely } from 'kysely';
import { type NewSend, type SendsRepo, type StepSend, stepKey } from '../../core/storage/sends.ts';
import type { Database } from '../schema.ts';
import { newSendRecord, toSendRecord, values } from './send-rows.ts';

/** Claims of send rows: campaign members and drip steps, each pair at most once. */
export function createSendClaims(db: Kysely<Database>): Pick<SendsRepo, 'claim' | 'claimSteps' | 'forSteps'> {
  /**
   * inserts the rows no other run holds yet (the unique key decides) and returns those it inserted.
   * Only the id and the token come back: every other column of a new row is what was written (or
   * its default, null), so the records are built from the written values. A campaign claims its
   * whole audience this way, and 17 columns read back and parsed per row were most of the garbage
   * the sender made per message.
   */
  const insertNew = async (rows: NewSend[], now: number, key: ['campaign_id', 'contact_id'] | ['enrollment_id', 'step_index'], attempts = 0) => {
    if (rows.length === 0) return [];
    const out = await db
      .insertInto('notify_sends')
      .values(rows.map((r) => ({ ...values(r, now), attempts })))
      .onConflict((oc) => oc.columns(key).doNothing())
      .returning(['id', 'token'])
      .execute();
    const byToken = new Map(rows.map((r) => [r.token, r]));
    return out.map((r) => newSendRecord(byToken.get(r.token)!, Number(r.id), now, attempts));
  };
  return {
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
  };
}
