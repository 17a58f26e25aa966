import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/store/contract.ts';
import { createStore } from '../../src/store/index.ts';
import { freshDatabaseUrl } from '../helpers/engines.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * PostgreSQL going away while a connection is checked out (mid-query or mid-transaction) must be
 * an error the caller sees, never an unhandled 'error' event that kills the process, and the
 * store must work again once the server is back.
 */
describe('PostgreSQL connection lost while in use', { skip: !process.env.NOTIFY_TEST_PG_URL, timeout: 30_000 }, () => {
  let proxy: TcpProxy;
  let store: Store;
  let direct: Store;
  before(async () => {
    const url = new URL(freshDatabaseUrl('postgres').url);
    direct = createStore(url.toString());
    await direct.migrate();
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    store = createStore(url.toString());
  });
  after(async () => {
    await store.close();
    await proxy.close();
    await direct.dialect.destroyData();
  });

  test('a query in flight rejects with a connection error', async () => {
    const pending = sql`select pg_sleep(5)`.execute(store.db);
    await new Promise((r) => setTimeout(r, 200));
    await proxy.cut();
    await assert.rejects(pending, (err) => store.dialect.isConnectionError(err));
    await proxy.restore();
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(store.db)).rows[0].one, 1);
  });

  test('a transaction waiting between statements rejects with a connection error', async () => {
    const pending = store.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await proxy.cut();
      await new Promise((r) => setTimeout(r, 100));
      await sql`select 2`.execute(trx);
    });
    await assert.rejects(pending, (err) => store.dialect.isConnectionError(err));
    await proxy.restore();
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(store.db)).rows[0].one, 1);
  });
});
