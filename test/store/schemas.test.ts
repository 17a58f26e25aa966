import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createStore } from '../../src/store/index.ts';
import { freshDatabaseUrl } from '../helpers/engines.ts';

test('two stores in different schemas of one PostgreSQL database both migrate', { skip: !process.env.NOTIFY_TEST_PG_URL }, async () => {
  const a = createStore(freshDatabaseUrl('postgres').url);
  const b = createStore(freshDatabaseUrl('postgres').url);
  try {
    assert.deepEqual((await a.migrate()).applied.slice(0, 1), ['001_initial']);
    // b must not mistake a's migration tables for its own
    assert.deepEqual((await b.migrate()).applied.slice(0, 1), ['001_initial']);
    assert.deepEqual((await b.migrate()).applied, []);
  } finally {
    await a.dialect.destroyData();
    await b.dialect.destroyData();
  }
});

test("?options= sets PostgreSQL settings for notify's sessions, with ?schema= as well", { skip: !process.env.NOTIFY_TEST_PG_URL }, async () => {
  const { url } = freshDatabaseUrl('postgres');
  const schema = new URL(url).searchParams.get('schema');
  const store = createStore(`${url}&options=${encodeURIComponent('-c synchronous_commit=off -c statement_timeout=12345')}`);
  try {
    await store.migrate();
    const { rows } = await sql<{ sc: string; st: string; schema: string }>`select current_setting('synchronous_commit') as sc, current_setting('statement_timeout') as st, current_schema() as schema`.execute(store.db);
    assert.deepEqual(rows[0], { sc: 'off', st: '12345ms', schema });
  } finally {
    await store.dialect.destroyData();
  }
});
