import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { allEmails } from './helpers.ts';

forEachEngine('contacts.list and contacts.count', (h) => {
  const notify = useNotify(h);

  test('pages by id with an opaque cursor; inserts during paging neither repeat nor skip anyone', async () => {
    const n = notify();
    for (let i = 0; i < 25; i++) await n.contacts.upsert({ email: `p${String(i).padStart(2, '0')}@example.com` });
    const seen: string[] = [];
    let page = await n.contacts.list({ limit: 10 });
    assert.equal(page.contacts.length, 10);
    assert.ok(page.next && !/^\d+$/.test(page.next), 'the cursor is not a bare id');
    seen.push(...page.contacts.map((c) => c.email));
    await n.contacts.upsert({ email: 'late@example.com' });
    while (page.next) {
      page = await n.contacts.list({ limit: 10, after: page.next });
      seen.push(...page.contacts.map((c) => c.email));
    }
    assert.equal(new Set(seen).size, seen.length, 'no contact twice');
    assert.equal(seen.length, 26, 'the contact added while paging comes on a later page');
    assert.equal(page.next, null);
    assert.equal((await n.contacts.list()).contacts.length, 26, 'default limit 50');
  });

  test('search matches email and name in any case; % _ and \\ are plain characters', async () => {
    const n = notify();
    await n.contacts.upsert({ email: 'zoe.percent@example.com', name: 'Zoë 100% Sure' });
    await n.contacts.upsert({ email: 'under_score@example.com', name: 'ÉMILE' });
    await n.contacts.upsert({ email: 'back@example.com', name: 'C:\\Users\\x' });
    await n.contacts.upsert({ email: 'quote@example.com', name: "O'Brien" });
    assert.deepEqual(await allEmails(n, { search: 'ZOË' }), ['zoe.percent@example.com']);
    assert.deepEqual(await allEmails(n, { search: 'émile' }), ['under_score@example.com'], 'non-ASCII folds on both engines');
    assert.deepEqual(await allEmails(n, { search: '100%' }), ['zoe.percent@example.com']);
    assert.deepEqual(await allEmails(n, { search: '%' }), ['zoe.percent@example.com'], '% is not a wildcard');
    assert.deepEqual(await allEmails(n, { search: '_' }), ['under_score@example.com'], '_ is not a wildcard');
    assert.deepEqual(await allEmails(n, { search: '\\users' }), ['back@example.com']);
    assert.deepEqual(await allEmails(n, { search: "' OR 1=1 --" }), []);
    assert.deepEqual(await allEmails(n, { search: "o'b" }), ['quote@example.com']);
  });

  test('filters by list (subscribed members) and by status; count agrees', async () => {
    const n = notify();
    await n.lists.create({ name: 'vip' });
    await n.contacts.upsert({ email: 'v1@example.com', lists: ['vip'] });
    await n.contacts.upsert({ email: 'v2@example.com', lists: ['vip'] });
    await n.contacts.upsert({ email: 'v3@example.com', lists: ['vip'], status: 'bounced' });
    await n.contacts.unsubscribe('v2@example.com', 'vip');
    assert.deepEqual(await allEmails(n, { list: 'VIP' }), ['v1@example.com', 'v3@example.com']);
    assert.deepEqual(await allEmails(n, { list: 'vip', status: 'bounced' }), ['v3@example.com']);
    assert.equal(await n.contacts.count({ list: 'vip' }), 2);
    assert.equal(await n.contacts.count(), (await allEmails(n)).length);
  });

  test('bad queries are INVALID_INPUT or NOT_FOUND', async () => {
    const n = notify();
    const bad: [unknown, string][] = [
      [{ limit: 0 }, 'INVALID_INPUT'],
      [{ limit: 1001 }, 'INVALID_INPUT'],
      [{ limit: 2.5 }, 'INVALID_INPUT'],
      [{ after: 'not-a-cursor' }, 'INVALID_INPUT'],
      [{ after: Buffer.from("c:1 OR 1=1").toString('base64url') }, 'INVALID_INPUT'],
      [{ status: 'everyone' }, 'INVALID_INPUT'],
      [{ search: 'x'.repeat(201) }, 'INVALID_INPUT'],
      [{ search: 'a\u0000' }, 'INVALID_INPUT'],
      [{ list: 'no-such-list' }, 'NOT_FOUND'],
    ];
    for (const [query, code] of bad) await assert.rejects(n.contacts.list(query as never), (e) => isNotifyError(e, code as never), JSON.stringify(query));
    // not a query object at all: INVALID_INPUT, never a TypeError from reading its fields
    for (const query of [null, 'news', 42, ['news']]) {
      await assert.rejects(n.contacts.list(query as never), (e) => isNotifyError(e, 'INVALID_INPUT') && /query must be an object/.test(e.message), `list(${JSON.stringify(query)})`);
      await assert.rejects(n.contacts.count(query as never), (e) => isNotifyError(e, 'INVALID_INPUT') && /query must be an object/.test(e.message), `count(${JSON.stringify(query)})`);
    }
    assert.equal((await n.contacts.list({ limit: 1000 })).contacts.length > 0, true, 'limit 1000 is allowed');
  });
});
