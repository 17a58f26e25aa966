import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Migrator } from 'kysely';
import { createNotify } from '../../src/notify.ts';
import { createDialect } from '../../src/store/index.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { ENGINES, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { createStore } from '../../src/store/index.ts';

/** A database as the release before list membership left it: migrations 001..007 and a member of a list. */
async function migrateBeforeMembership(url: string): Promise<void> {
  const dialect = createDialect(url);
  try {
    await dialect.prepare();
    const names = Object.keys(MIGRATIONS).filter((n) => n < '008');
    const migrator = new Migrator({
      db: dialect.db,
      provider: { getMigrations: async () => Object.fromEntries(names.map((n) => [n, { up: (db) => MIGRATIONS[n].up(db, { ...dialect.columns, kind: dialect.kind }) }])) },
      migrationTableSchema: await dialect.migrationTableSchema(),
      migrationTableName: 'notify_migrations',
      migrationLockTableName: 'notify_migrations_lock',
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
    const db = dialect.db as never as import('kysely').Kysely<any>;
    const list = await db.insertInto('notify_lists').values({ name: 'news', created_at: 1 }).returning('id').executeTakeFirstOrThrow();
    const contact = await db
      .insertInto('notify_contacts')
      .values({ email: 'old@example.com', email_key: 'old@example.com', status: 'subscribed', unsubscribe_token: 'tok_old_member_000000', attributes: '{}', created_at: 1, updated_at: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('notify_list_members').values({ list_id: list.id, contact_id: contact.id, created_at: 1 }).execute();
  } finally {
    await dialect.close();
  }
}

for (const engine of ENGINES) {
  test(`[${engine}] members of lists before the upgrade are subscribed to them after it`, async () => {
    const { url, cleanup } = freshDatabaseUrl(engine);
    try {
      await migrateBeforeMembership(url);
      const notify = await createNotify(testOptions(url));
      try {
        assert.deepEqual((await notify.contacts.get('old@example.com'))?.lists, ['news']);
        assert.equal(await notify.contacts.count({ list: 'news' }), 1);
        const campaign = await notify.campaigns.create({ subject: 'Hi', text: 'hi', list: 'news' });
        assert.equal(await notify.context.store.campaigns.countUnsent(campaign), 1);
        assert.deepEqual((await notify.lists.list()).map((l) => [l.name, l.public, l.subscribers]), [['news', false, 1]]);
      } finally {
        await notify.close();
      }
    } finally {
      await createStore(url).dialect.destroyData();
      cleanup();
    }
  });
}
