import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { Migrator } from 'kysely';
import { isNotifyError } from '../../src/errors.ts';
import * as initial from '../../src/store/migrations/001_initial.ts';
import * as sending from '../../src/store/migrations/002_sending.ts';
import * as eventClickWindow from '../../src/store/migrations/003_event_click_window.ts';
import * as eventsClickIndex from '../../src/store/migrations/004_events_click_index.ts';
import * as tracking from '../../src/store/migrations/005_tracking.ts';
import * as capture from '../../src/store/migrations/006_capture.ts';
import * as sendSuppressedRecipients from '../../src/store/migrations/007_send_suppressed_recipients.ts';
import { MIGRATIONS, type MigrationModule } from '../../src/store/migrations/index.ts';
import { createDialect, createStore, type Store } from '../../src/store/index.ts';
import { ENGINES, type Engine, freshDatabaseUrl } from '../helpers/engines.ts';

/**
 * The names older releases gave the migrations, kept apart from src/store/migrations/legacy-names.ts
 * so that a wrong entry there fails here. Those releases ran the list unordered: a migration
 * numbered below the newest applied one still ran.
 */
const OLD_RELEASE: Record<string, MigrationModule> = {
  '001_initial': initial,
  '003_sending': sending,
  '004_event_click_window': eventClickWindow,
  '004_events_click_index': eventsClickIndex,
  '004_tracking': tracking,
  '007_capture': capture,
  '008_send_suppressed_recipients': sendSuppressedRecipients,
};
const NEW_NAMES = Object.keys(MIGRATIONS);
/** what a database of the old release lacks that came after it */
const SINCE_OLD_RELEASE = NEW_NAMES.filter((name) => name >= '008');
const NOW = Date.UTC(2026, 0, 1);

/** Migrates as a release with `names` in its list did. */
async function migrateAsOldRelease(url: string, names: string[]): Promise<void> {
  const dialect = createDialect(url);
  try {
    await dialect.prepare();
    const migrator = new Migrator({
      db: dialect.db,
      provider: { getMigrations: async () => Object.fromEntries(names.map((n) => [n, { up: (db) => OLD_RELEASE[n].up(db, { ...dialect.columns, kind: dialect.kind }) }])) },
      migrationTableSchema: await dialect.migrationTableSchema(),
      migrationTableName: 'notify_migrations',
      migrationLockTableName: 'notify_migrations_lock',
      allowUnorderedMigrations: true,
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
  } finally {
    await dialect.close();
  }
}

async function recordedNames(url: string): Promise<string[]> {
  const dialect = createDialect(url);
  try {
    const rows = await dialect.db.selectFrom('notify_migrations' as never).select('name' as never).execute();
    return rows.map((r) => (r as { name: string }).name).sort();
  } finally {
    await dialect.close();
  }
}

async function withStore(url: string, fn: (store: Store) => Promise<void>): Promise<void> {
  const store = createStore(url);
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

/** A database of its own for one test, dropped afterwards. */
async function withDatabase(engine: Engine, fn: (url: string) => Promise<void>): Promise<void> {
  const { url, cleanup } = freshDatabaseUrl(engine);
  try {
    await fn(url);
  } finally {
    await createStore(url).dialect.destroyData();
    cleanup();
  }
}

test('migration names are numbered in the order they run, each number once', () => {
  const names = Object.keys(MIGRATIONS);
  assert.deepEqual(names, [...names].sort(), 'listed in sorted order');
  for (const name of names) assert.match(name, /^\d{3}_[a-z0-9_]+$/, name);
  // numbers handed out to work done in parallel leave gaps until that work is merged
  const numbers = names.map((name) => Number(name.slice(0, 3)));
  numbers.forEach((n, i) => assert.ok(i === 0 ? n === 1 : n > numbers[i - 1], `${names[i]} after ${names[i - 1]}`));
});

for (const engine of ENGINES) {
  describe(`migrations [${engine}]`, () => {
    test('a fresh database records the current names, and a second run applies nothing', () =>
      withDatabase(engine, async (url) => {
        await withStore(url, async (store) => {
          assert.deepEqual((await store.migrate()).applied, NEW_NAMES);
          assert.deepEqual((await store.migrate()).applied, []);
        });
        assert.deepEqual(await recordedNames(url), NEW_NAMES);
      }));

    test('a database migrated under the old names takes the new names, runs nothing again and keeps its data', () =>
      withDatabase(engine, async (url) => {
        await migrateAsOldRelease(url, Object.keys(OLD_RELEASE));
        await withStore(url, async (store) => {
          await store.db
            .insertInto('notify_contacts')
            .values({ email: 'kept@example.com', email_key: 'kept@example.com', status: 'subscribed', unsubscribe_token: 'tok-kept', attributes: '{"plan":"pro"}', created_at: NOW, updated_at: NOW })
            .execute();
          assert.deepEqual((await store.migrate()).applied, SINCE_OLD_RELEASE, 'only what came after the old release');
          assert.deepEqual(await recordedNames(url), NEW_NAMES);
          assert.deepEqual((await store.migrate()).applied, [], 'a second run applies nothing');
          const kept = await store.db.selectFrom('notify_contacts').select(['email', 'attributes']).execute();
          assert.deepEqual(
            kept.map((r) => ({ email: r.email, attributes: typeof r.attributes === 'string' ? JSON.parse(r.attributes) : r.attributes })),
            [{ email: 'kept@example.com', attributes: { plan: 'pro' } }],
          );
        });
      }));

    test('an old deployment that applied a lower number after a higher one upgrades', () =>
      withDatabase(engine, async (url) => {
        // As the releases came: capture shipped before sending, which had a lower number.
        await migrateAsOldRelease(url, ['001_initial', '004_tracking', '007_capture']);
        await sleep(5);
        await migrateAsOldRelease(url, Object.keys(OLD_RELEASE));
        await withStore(url, async (store) => {
          assert.deepEqual((await store.migrate()).applied, SINCE_OLD_RELEASE);
          assert.deepEqual((await store.migrate()).applied, []);
        });
        assert.deepEqual(await recordedNames(url), NEW_NAMES);
      }));

    test('an old deployment lacking migrations numbered below its newest gets them, once', () =>
      withDatabase(engine, async (url) => {
        await migrateAsOldRelease(url, ['001_initial', '004_tracking', '007_capture']);
        await withStore(url, async (store) => {
          assert.deepEqual((await store.migrate()).applied, ['002_sending', '003_event_click_window', '004_events_click_index', '007_send_suppressed_recipients', ...SINCE_OLD_RELEASE]);
          assert.deepEqual((await store.migrate()).applied, []);
          const camp = await store.db
            .insertInto('notify_campaigns')
            .values({ subject: 'S', status: 'draft', created_at: NOW, data: '{"a":1}', headers: '{}' })
            .returning('id')
            .executeTakeFirstOrThrow();
          assert.ok(Number(camp.id) > 0, 'the columns of 002_sending exist');
        });
        assert.deepEqual(await recordedNames(url), NEW_NAMES);
      }));

    test('two instances starting on an old database at once both come up, and it is renamed once', () =>
      withDatabase(engine, async (url) => {
        await migrateAsOldRelease(url, ['001_initial', '004_tracking', '007_capture']);
        const a = createStore(url);
        const b = createStore(url);
        try {
          const [ra, rb] = await Promise.all([a.migrate(), b.migrate()]);
          assert.deepEqual([...ra.applied, ...rb.applied].sort(), ['002_sending', '003_event_click_window', '004_events_click_index', '007_send_suppressed_recipients', ...SINCE_OLD_RELEASE]);
        } finally {
          await a.close();
          await b.close();
        }
        assert.deepEqual(await recordedNames(url), NEW_NAMES);
      }));

    test('old names beside one this version does not know are refused and left as they are', () =>
      withDatabase(engine, async (url) => {
        await migrateAsOldRelease(url, Object.keys(OLD_RELEASE));
        await withStore(url, async (store) => {
          await store.db
            .insertInto('notify_migrations' as never)
            .values({ name: '009_from_elsewhere', timestamp: new Date().toISOString() } as never)
            .execute();
          await assert.rejects(store.migrate(), (err) => isNotifyError(err, 'STORE_UNAVAILABLE') && /009_from_elsewhere/.test(err.message));
        });
        assert.deepEqual(await recordedNames(url), [...Object.keys(OLD_RELEASE), '009_from_elsewhere'].sort());
      }));
  });
}
