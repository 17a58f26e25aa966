import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, type Kysely, type KyselyPlugin, type RootOperationNode, createQueryId } from 'kysely';
import type { EventSink } from '../../src/core/storage/outbound.ts';
import { createStore } from '../../src/store/index.ts';
import { createOutbox, TRACKED_TYPES } from '../../src/store/outbox.ts';
import type { Database } from '../../src/store/schema.ts';
import { freshDatabaseUrl } from '../helpers/engines.ts';

const ENDPOINT = 'http://127.0.0.1:9/hooks';
const sink: EventSink = {
  endpointsFor: (type) => (type === TRACKED_TYPES.open ? [ENDPOINT] : []),
  wants: (type) => type === TRACKED_TYPES.open,
  listens: () => false,
  publish: () => {},
};

/** the nodes of every query run through the returned Kysely, to compile and explain afterwards */
function capturing(db: Kysely<Database>): { db: Kysely<Database>; nodes: RootOperationNode[] } {
  const nodes: RootOperationNode[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      nodes.push(node);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { db: db.withPlugin(plugin), nodes };
}

// A tracking batch's outbox row is written on the pixel server's own thread (SQLite), once per
// flush: a statement that reads all of notify_events costs every flush more as the table grows.
test('[sqlite] the outbox row of a tracking batch reads notify_events by its key, never by a scan of the table', async (t) => {
  const { url, cleanup } = freshDatabaseUrl('sqlite');
  const store = createStore(url);
  t.after(async () => {
    await store.close();
    cleanup();
  });
  await store.migrate();
  const outbox = createOutbox(sink, store.dialect);
  const { db, nodes } = capturing(store.db);
  await db.transaction().execute(async (trx) => {
    const start = await outbox.trackingStart(trx);
    assert.equal(start, 0);
    await outbox.writeTracking(trx, start!, 1_000);
  });
  assert.ok(nodes.length >= 2, 'the range read and the outbox insert went through the caller\'s transaction');
  const executor = store.db.getExecutor();
  for (const node of nodes) {
    const compiled = executor.compileQuery(node, createQueryId());
    const plan = await store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
    const scans = plan.rows.map((r) => r.detail).filter((d) => /^SCAN notify_events\b/.test(d));
    assert.deepEqual(scans, [], `${compiled.sql}\nscans notify_events: ${plan.rows.map((r) => r.detail).join('; ')}`);
  }
});
