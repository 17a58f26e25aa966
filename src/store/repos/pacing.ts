import type { Kysely } from 'kysely';
import { IN_FLIGHT_MS, type KeyState, takeTurn, WINDOW_MS } from '../../core/pacer.ts';
import type { PacingRepo } from '../../core/storage/pacing.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';

/** Each key's next turn and the turns that count at `now`. */
async function readState(db: Kysely<Database>, keys: string[], now: number, lock?: StoreDialect): Promise<Map<string, KeyState>> {
  const nextQuery = db.selectFrom('notify_send_pacing').select(['key', 'next_us']).where('key', 'in', keys).orderBy('key');
  const nexts = await (lock ? lock.lockForUpdate(nextQuery) : nextQuery).execute();
  const live = await db
    .selectFrom('notify_send_pacing_turns')
    .select(['key', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('until').as('first')])
    .where('key', 'in', keys)
    .where('until', '>', Math.floor(now))
    .groupBy('key')
    .execute();
  const state = new Map<string, KeyState>(keys.map((k) => [k, { next: 0, live: 0, firstFree: Number.POSITIVE_INFINITY }]));
  for (const r of nexts) state.get(r.key)!.next = Number(r.next_us) / 1000;
  for (const r of live) Object.assign(state.get(r.key)!, { live: Number(r.n), firstFree: Number(r.first) });
  return state;
}

/** turns that stopped counting are deleted once every so many takes, not on every one */
const PURGE_EVERY = 64;

export function createPacingRepo(db: Kysely<Database>, dialect: StoreDialect): PacingRepo {
  let takes = 0;
  return {
    async take(rules, now, turnId) {
      const keys = [...new Set(rules.map((r) => r.key))].sort();
      // A plain read first: a worker that is early learns how long to wait without taking a lock.
      const before = await readState(db, keys, now);
      const seen = takeTurn(rules, before, now);
      if (!seen.taken) return seen;
      const missing = keys.filter((k) => before.get(k)!.next === 0);
      return dialect.writeTransaction(db, async (trx) => {
        // Rows exist before they are locked (a missing row cannot be locked); keys in one order, so
        // two workers taking `*` and a domain together never deadlock.
        if (missing.length > 0) {
          await trx
            .insertInto('notify_send_pacing')
            .values(missing.map((key) => ({ key, next_us: 0 })))
            .onConflict((oc) => oc.column('key').doNothing())
            .execute();
        }
        const turn = takeTurn(rules, await readState(trx, keys, now, dialect), now);
        if (!turn.taken) return turn;
        for (const [key, nextAt] of turn.next ?? []) {
          await trx.updateTable('notify_send_pacing').set({ next_us: Math.round(nextAt * 1000) }).where('key', '=', key).execute();
        }
        if (++takes % PURGE_EVERY === 0) await trx.deleteFrom('notify_send_pacing_turns').where('until', '<=', Math.floor(now)).execute();
        await trx
          .insertInto('notify_send_pacing_turns')
          .values(keys.map((key) => ({ key, turn: turnId, until: Math.ceil(now + IN_FLIGHT_MS) })))
          .execute();
        return { taken: true, waitMs: turn.waitMs };
      });
    },
    async done(rules, turnId, at) {
      // a turn that has stopped counting (its in-flight time ended) is not brought back
      const keys = rules.map((r) => r.key);
      await db.updateTable('notify_send_pacing_turns').set({ until: Math.ceil(at + WINDOW_MS) }).where('key', 'in', keys).where('turn', '=', turnId).where('until', '>', Math.floor(at)).execute();
    },
  };
}
