import type { Kysely } from 'kysely';
import type { FixedRun, StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';

/** undefined_function: the database predates the function a migration adds */
const isMissingFunction = (err: unknown) => (err as { code?: string })?.code === '42883';

/**
 * A group commit through a kept-plan function a migration adds (022's notify_send_group, 023's
 * notify_step_group), or, on a database that predates it, the same work as one inline statement.
 * The first undefined_function turns this writer to the inline form for good: its store's database
 * predates the function (a migrate meanwhile is seen by the next store). Returns the rows.
 */
export function functionOrInline(writeFixed: StoreDialect['writeFixed']) {
  let unmigrated = false;
  return async (db: Kysely<Database>, call: FixedRun, inline: () => FixedRun): Promise<unknown[] | undefined> => {
    if (!unmigrated) {
      try {
        return (await writeFixed(db, [call]))[0];
      } catch (err) {
        if (!isMissingFunction(err)) throw err;
        unmigrated = true;
      }
    }
    return (await writeFixed(db, [inline()]))[0];
  };
}
