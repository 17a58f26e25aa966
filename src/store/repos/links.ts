import type { Kysely } from 'kysely';
import type { LinksRepo } from '../../core/storage/links.ts';
import type { Database } from '../schema.ts';

export function createLinksRepo(db: Kysely<Database>): LinksRepo {
  return {
    async ensureScope(scope, urls, now) {
      if (urls.length === 0) return;
      for (let i = 0; i < urls.length; i += 500) {
        await db
          .insertInto('notify_links')
          .values(urls.slice(i, i + 500).map((url, j) => ({ scope, position: i + j, url, created_at: now })))
          .onConflict((oc) => oc.columns(['scope', 'position']).doNothing())
          .execute();
      }
    },
    async urlsForScope(scope) {
      const rows = await db.selectFrom('notify_links').select(['position', 'url']).where('scope', '=', scope).orderBy('position').execute();
      const out: string[] = [];
      for (const r of rows) out[r.position] = r.url;
      return out;
    },
  };
}
