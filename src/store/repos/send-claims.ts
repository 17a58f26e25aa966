import type { Kysely } from 'kysely';
import { type NewSend, type SendsRepo, type StepSend, stepKey } from '../../core/storage/sends.ts';
import type { Database } from '../schema.ts';
import { claimedRecord, toSendRecord, values } from './send-rows.ts';

/** Claims of send rows: campaign members and drip steps, each pair at most once. */
export function createSendClaims(db: Kysely<Database>): Pick<SendsRepo, 'claim' | 'claimSteps' | 'forSteps'> {
  /**
   * inserts the rows no other run holds yet (the unique key decides) and returns those it inserted.
   * Only the id and the token come back: the rest is what was just written, so the records are
   * built from it (a chunk's full rows cost the sender ~22 parsed fields and five dates per send).
   */
  const insertNew = async (rows: NewSend[], now: number, key: ['campaign_id', 'contact_id'] | ['enrollment_id', 'step_index'], attempts = 0) => {
    if (rows.length === 0) return [];
    const written = rows.map((r) => ({ ...values(r, now), attempts }));
    const out = await db
      .insertInto('notify_sends')
      .values(written)
      .onConflict((oc) => oc.columns(key).doNothing())
      .returning(['id', 'token'])
      .execute();
    const byToken = new Map(written.map((w, i) => [w.token, rows[i]]));
    return out.map(({ id, token }) => claimedRecord(Number(id), byToken.get(token)!, now, attempts));
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
