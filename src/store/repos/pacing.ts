import type { Kysely } from 'kysely';
import { takeTurn } from '../../core/pacer.ts';
import type { PacingRepo } from '../../core/storage/pacing.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';

export function createPacingRepo(db: Kysely<Database>, dialect: StoreDialect): PacingRepo {
  return {
    async take(rules, now) {
      const keys = [...new Set(rules.map((r) => r.key))].sort();
      const nextOf = (rows: { key: string; next_us: number }[]) => new Map(rows.map((r) => [r.key, Number(r.next_us) / 1000]));
      // A plain read first: a worker that is early learns how long to wait without taking a lock.
      const seen = takeTurn(rules, nextOf(await db.selectFrom('notify_send_pacing').select(['key', 'next_us']).where('key', 'in', keys).execute()), now);
      if (!seen.taken) return seen;
      // Rows exist before they are locked (a missing row cannot be locked); keys in one order, so
      // two workers taking `*` and a domain together never deadlock.
      return dialect.writeTransaction(db, async (trx) => {
        await trx
          .insertInto('notify_send_pacing')
          .values(keys.map((key) => ({ key, next_us: 0 })))
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
        const rows = await dialect.lockForUpdate(trx.selectFrom('notify_send_pacing').select(['key', 'next_us']).where('key', 'in', keys).orderBy('key')).execute();
        const turn = takeTurn(rules, nextOf(rows), now);
        for (const [key, nextAt] of turn.next ?? []) {
          await trx.updateTable('notify_send_pacing').set({ next_us: Math.round(nextAt * 1000) }).where('key', '=', key).execute();
        }
        return { taken: turn.taken, waitMs: turn.waitMs };
      });
    },
  };
}
