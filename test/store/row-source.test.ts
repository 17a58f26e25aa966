import assert from 'node:assert/strict';
import { test } from 'node:test';
import { columnList } from '../../src/store/dialect.ts';
import { fixedStatement } from '../../src/store/fixed-statement.ts';
import { parseJson } from '../../src/store/rows.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';

// Text that an array literal or a JSON parameter must carry through unchanged.
const AWKWARD = ['', 'NULL', 'null', '"', '\\', '\\"', '{}', '{a,b}', 'a,b', ' lead and trail ', 'quote " in', "it's", 'tab\there', 'line\nbreak', 'ünï©ødé 😀', '\\\\server\\share'];
const COLUMNS = columnList({ type: 'text', send_id: 'bigint', contact_id: 'bigint', campaign_id: 'bigint', link_index: 'integer', metadata: 'json', is_machine: 'smallint', machine_reason: 'text', created_at: 'bigint' });

forEachEngine('rows bound as parameters', (h) => {
  const a = useNotify(h);

  test('insertRows stores awkward text, nested JSON, nulls and large integers as given', async () => {
    const { store } = a().context;
    const campaignId = await insertCampaign(store);
    const send = await insertSend(a(), { campaignId, sentAt: 0 });
    const rows = AWKWARD.map((text, i) => ({
      type: 'open',
      send_id: send.id,
      contact_id: i % 2 ? null : send.contactId,
      campaign_id: null,
      link_index: i % 3 ? null : 5 - i,
      metadata: store.dialect.jsonRowValue(i % 2 ? {} : { text, nested: { list: [text, null, 1.5, true] } }),
      is_machine: i % 2,
      machine_reason: text,
      created_at: 4_503_599_627_370_496 + i,
    }));
    await store.dialect.writeTransaction(store.db, (trx) => store.dialect.insertRows(trx, 'notify_events', COLUMNS, rows));
    const stored = await store.db.selectFrom('notify_events').selectAll().where('send_id', '=', send.id).orderBy('created_at').execute();
    assert.deepEqual(
      stored.map((r) => [r.machine_reason, r.contact_id === null ? null : Number(r.contact_id), r.link_index === null ? null : Number(r.link_index), parseJson(r.metadata), Number(r.is_machine), Number(r.created_at)]),
      AWKWARD.map((text, i) => [text, i % 2 ? null : send.contactId, i % 3 ? null : 5 - i, i % 2 ? {} : { text, nested: { list: [text, null, 1.5, true] } }, i % 2, 4_503_599_627_370_496 + i]),
    );
  });

  test('rowSource: a fixed statement reads the rows back in the order given', async () => {
    const { store } = a().context;
    const source = store.dialect.rowSource(columnList({ name: 'text', n: 'bigint' }));
    const read = fixedStatement(`select name, n from (${source.text}) as r order by n`);
    const rows = AWKWARD.map((name, n) => ({ name, n }));
    const { rows: back } = await read<{ name: string; n: number }>(store.db, source.parameters(rows));
    assert.deepEqual(
      back.map((r) => [r.name, Number(r.n)]),
      rows.map((r) => [r.name, r.n]),
    );
    assert.deepEqual((await read(store.db, source.parameters([]))).rows, []);
  });

  test('lockRowsByKey finds keys with quotes, backslashes and braces (and no others)', async () => {
    const { store } = a().context;
    const campaignId = await insertCampaign(store);
    const send = await insertSend(a(), { campaignId, sentAt: 3 });
    const rows = await store.dialect.writeTransaction(store.db, (trx) => store.dialect.lockRowsByKey(trx, 'notify_sends', 'token', ['id', 'token', 'sent_at'], [...AWKWARD, send.token, `${send.token}"`, `{${send.token}}`]));
    assert.deepEqual(rows, [[send.id, send.token, 3]]);
  });

  // SQLite stores what it is given (its columns have affinities, not types): PostgreSQL's literal must not be bent
  test('a value that is not an integer in an integer column is refused, and nothing of the rows is stored', { skip: h.engine !== 'postgres' && 'PostgreSQL array literals only' }, async () => {
    const { store } = a().context;
    const campaignId = await insertCampaign(store);
    const send = await insertSend(a(), { campaignId, sentAt: 0 });
    const row = (created_at: unknown) => ({ type: 'open', send_id: send.id, contact_id: null, campaign_id: null, link_index: null, metadata: store.dialect.jsonRowValue({}), is_machine: 0, machine_reason: null, created_at });
    for (const bad of ['1,2', '1}', '{1}', 'NaN', 1.5, '12 ']) {
      await assert.rejects(store.dialect.writeTransaction(store.db, (trx) => store.dialect.insertRows(trx, 'notify_events', COLUMNS, [row(1), row(bad)])));
    }
    const stored = await store.db.selectFrom('notify_events').select('id').where('send_id', '=', send.id).execute();
    assert.equal(stored.length, 0);
  });
});
