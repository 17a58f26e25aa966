import { type Kysely, sql } from 'kysely';
import type { RateLimitsRepo } from '../../core/storage/rate-limits.ts';
import type { Database } from '../schema.ts';

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
