import type { Kysely } from 'kysely';
import type { MetaRepo } from '../../core/storage/meta.ts';
import type { Database } from '../schema.ts';

export function createMetaRepo(db: Kysely<Database>): MetaRepo {
  const get = async (key: string) => (await db.selectFrom('notify_meta').select('value').where('key', '=', key).executeTakeFirst())?.value;
  return {
    get,
    async getOrSet(key, value) {
      await db.insertInto('notify_meta').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
      return (await get(key))!;
    },
  };
}
