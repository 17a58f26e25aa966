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

  test('a file of existing contacts updates them batch by batch: exact counts, empty cells keep stored values, a left list stays left', async () => {
    const n = IMPORT_BATCH + 40;
    await importText(notify(), ['email,name,plan,city', ...rows(0, n, (i) => `v${i}@example.com,Name ${i},free,Paris`)].join('\n'), { lists: ['vbulk'] });
    await notify().contacts.unsubscribe('v10@example.com', 'vbulk');
    await notify().contacts.unsubscribe('v6@example.com');
    await notify().contacts.upsert({ email: 'v7@example.com', status: 'bounced' });
    const next = rows(0, n, (i) => {
      if (i % 4 === 0) return `v${i}@example.com,Name ${i},free,Paris`; // the same: unchanged
      if (i % 4 === 1) return `v${i}@example.com,,,`; // only empty cells: unchanged
      if (i % 4 === 2) return `v${i}@example.com,New ${i},,Lyon`; // a new name, the plan kept, the city changed
      return `v${i}@example.com,,pro,`; // the plan changed, the name kept
    });
    const res = await importText(notify(), ['email,name,plan,city', ...next].join('\n'), { lists: ['vbulk'] });
    const changed = Array.from({ length: n }, (_, i) => i).filter((i) => i % 4 >= 2).length;
    assert.deepEqual([res.created, res.updated, res.unchanged, res.rejected.length], [0, changed, n - changed, 0]);
    for (const i of [2, 3, 6, 7, 10, 11, n - 2, n - 1]) {
      const c = (await notify().contacts.get(`v${i}@example.com`))!;
      const want = i % 4 === 2 ? [`New ${i}`, { plan: 'free', city: 'Lyon' }] : [`Name ${i}`, { plan: 'pro', city: 'Paris' }];
      assert.deepEqual([c.name, c.attributes], want, `v${i}`);
    }
    assert.deepEqual((await notify().contacts.get('v10@example.com'))!.lists, [], 'a left list stays left');
    assert.equal((await notify().contacts.get('v6@example.com'))!.status, 'unsubscribed', 'an import never lifts a suppression');
    assert.equal((await notify().contacts.get('v7@example.com'))!.status, 'bounced');
    assert.equal(await notify().contacts.count({ list: 'vbulk' }), n - 1);
    const again = await importText(notify(), ['email,name,plan,city', ...next].join('\n'), { lists: ['vbulk'] });
    assert.deepEqual([again.created, again.updated, again.unchanged], [0, 0, n], 'a second run changes nothing');
    const otherCase = await importText(notify(), ['email,name,plan,city', ...next].join('\n'), { lists: ['VBulk'] });
    assert.deepEqual([otherCase.updated, otherCase.unchanged], [0, n], 'a list named in another case is the same list');
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
