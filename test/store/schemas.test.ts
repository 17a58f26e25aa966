import assert from 'node:assert/strict';
import { test } from 'node:test';
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
