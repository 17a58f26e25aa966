import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IMPORT_BATCH } from '../../src/core/import.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { importText } from './helpers.ts';

const rows = (from: number, to: number, cells: (i: number) => string) => Array.from({ length: to - from }, (_, k) => cells(from + k));

forEachEngine('contacts:import in batches', (h) => {
  const notify = useNotify(h);

  test('more rows than a batch, with bad rows and repeated addresses inside batches: the same report as row by row', async () => {
    const n = IMPORT_BATCH * 2 + 17;
    const lines = ['email,name,plan', ...rows(0, n, (i) => `u${i}@example.com,User ${i},`)];
    lines[10] = 'not-an-address,Bad,'; // line 11
    lines[IMPORT_BATCH + 3] = 'u3@EXAMPLE.com,,pro'; // the same person again, in the next batch
    lines[40] = 'u41@example.com,,team'; // twice within one batch: u41 is also line 42
    const res = await importText(notify(), lines.join('\n'), { lists: ['bulk'] });
    assert.deepEqual(res.rejected, [{ line: 11, reason: 'Invalid email address: "not-an-address"' }]);
    assert.deepEqual([res.created, res.updated, res.unchanged, res.imported], [n - 3, 2, 0, n - 1]);
    assert.equal(await notify().contacts.count({ list: 'bulk' }), n - 3);
    const u3 = (await notify().contacts.get('u3@example.com'))!;
    assert.deepEqual([u3.name, u3.attributes], ['User 3', { plan: 'pro' }], 'an empty name cell kept the stored name');
    assert.deepEqual((await notify().contacts.get('u41@example.com'))!.attributes, { plan: 'team' });

    const again = await importText(notify(), lines.join('\n'), { lists: ['bulk'] });
    assert.deepEqual([again.created, again.updated, again.unchanged, again.rejected.length], [0, 0, n - 1, 1], 'a second run changes nothing');
  });

  test('an erased address that had unsubscribed comes back unsubscribed, as with a single upsert', async () => {
    await notify().contacts.upsert({ email: 'gone@example.com' });
    await notify().contacts.unsubscribe('gone@example.com');
    await notify().contacts.erase('gone@example.com');
    const res = await importText(notify(), 'email\ngone@example.com\nnew@example.com\n');
    assert.equal(res.created, 2);
    assert.equal((await notify().contacts.get('gone@example.com'))!.status, 'unsubscribed');
    assert.equal((await notify().contacts.get('new@example.com'))!.status, 'subscribed');
  });
});
