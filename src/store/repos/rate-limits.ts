import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.ts';

export interface RateLimitsRepo {
  /**
   * Counts one hit on `bucket` in one atomic statement: a window starts at the first hit and lasts
   * `windowMs`; a hit after it ends starts a new one. Returns the hits so far and when the window ends.
   */
  hit(bucket: string, windowMs: number, now: number): Promise<{ hits: number; resetAt: number }>;
  /** deletes windows that have ended; returns how many */
  purge(now: number): Promise<number>;
}

export function createRateLimitsRepo(db: Kysely<Database>): RateLimitsRepo {
  return {
    async hit(bucket, windowMs, now) {
      // One INSERT .. ON CONFLICT .. RETURNING on both engines: concurrent instances never lose a hit.
      const live = sql<boolean>`notify_rate_limits.reset_at > ${now}`;
      const row = await db
        .insertInto('notify_rate_limits')
        .values({ bucket, hits: 1, reset_at: now + windowMs })
        .onConflict((oc) =>
          oc.column('bucket').doUpdateSet({
            hits: sql`case when ${live} then notify_rate_limits.hits + 1 else 1 end`,
            reset_at: sql`case when ${live} then notify_rate_limits.reset_at else ${now + windowMs} end`,
          }),
        )
        .returning(['hits', 'reset_at'])
        .executeTakeFirstOrThrow();
      return { hits: Number(row.hits), resetAt: Number(row.reset_at) };
    },
    async purge(now) {
      const result = await db.deleteFrom('notify_rate_limits').where('reset_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
