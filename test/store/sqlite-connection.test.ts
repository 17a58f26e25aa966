import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createStore } from '../../src/store/index.ts';
import { WAL_CHECKPOINT_PAGES } from '../../src/store/sqlite/index.ts';
import { freshDatabaseUrl } from '../helpers/engines.ts';

// A tracking batch writes thousands of index pages to the WAL; the default threshold (1,000 pages)
// made nearly every batch commit run a checkpoint on the request thread.
test('a SQLite connection writes in WAL mode and checkpoints only past WAL_CHECKPOINT_PAGES', async () => {
  const { url, cleanup } = freshDatabaseUrl('sqlite');
  const store = createStore(url);
  try {
    await store.migrate();
    const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    const pages = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db);
    assert.equal(mode.rows[0].journal_mode, 'wal');
    assert.equal(WAL_CHECKPOINT_PAGES, 10_000);
    assert.equal(pages.rows[0].wal_autocheckpoint, WAL_CHECKPOINT_PAGES);
  } finally {
    await store.close();
    cleanup();
  }
});
