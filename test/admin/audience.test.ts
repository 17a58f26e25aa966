import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
const emails = (html: string) => [...html.matchAll(/<td class="wrap"><a href="\/notify\/admin\/contacts\/[0-9]+">([^<]*)<\/a><\/td>/g)].map((m) => m[1]);

forEachEngine('admin pages: lists and contacts', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN });
  before(async () => {
    await notify().lists.create({ name: 'News', description: '<b>bold</b> & co', public: true });
    await notify().lists.create({ name: 'Tips' });
    for (let i = 0; i < 60; i++) await notify().contacts.upsert({ email: `u${String(i).padStart(2, '0')}@example.com`, name: `User ${i}`, lists: i % 2 ? ['News'] : ['Tips'] });
    await notify().contacts.upsert({ email: 'x%_@example.com', name: '<script>alert(1)</script>', lists: ['News'] });
    await notify().contacts.unsubscribe('u01@example.com');
  });

  test('both pages need the admin token', async () => {
    for (const path of ['/notify/admin/lists', '/notify/admin/contacts']) assert.equal((await call(notify(), path)).status, 401, path);
  });

  test('lists: name, escaped description, public, subscribers, a link to its contacts', async () => {
    const res = await call(notify(), '/notify/admin/lists', auth);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await res.text();
    assert.ok(html.includes('&lt;b&gt;bold&lt;/b&gt; &amp; co'));
    assert.match(html, /href="\/notify\/admin\/contacts\?list=News">News<\/a><\/td>\s*<td>[^<]*<\/td>\s*<td>yes<\/td>\s*<td class="n">31<\/td>/);
    assert.match(html, /href="\/notify\/admin\/contacts\?list=Tips">Tips<\/a><\/td>\s*<td><\/td>\s*<td>no<\/td>\s*<td class="n">30<\/td>/);
  });

  test('contacts: filter by list, status and search (escaped, % and _ as text), pages by cursor', async () => {
    const first = await (await call(notify(), '/notify/admin/contacts?list=news', auth)).text();
    const page1 = emails(first);
    assert.equal(page1.length, 31);
    assert.ok(first.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !first.includes('<script>'));
    const all = await (await call(notify(), '/notify/admin/contacts', auth)).text();
    assert.equal(emails(all).length, 50);
    const next = /href="\/notify\/admin\/contacts\?([^"]+)">Next page/.exec(all)![1].replace(/&amp;/g, '&');
    const rest = emails(await (await call(notify(), `/notify/admin/contacts?${next}`, auth)).text());
    assert.equal(rest.length, 11);
    assert.equal(new Set([...emails(all), ...rest]).size, 61, 'no contact twice across pages');
    assert.deepEqual(emails(await (await call(notify(), '/notify/admin/contacts?status=unsubscribed', auth)).text()), ['u01@example.com']);
    assert.deepEqual(emails(await (await call(notify(), `/notify/admin/contacts?search=${encodeURIComponent('x%_')}`, auth)).text()), ['x%_@example.com']);
    assert.deepEqual(emails(await (await call(notify(), `/notify/admin/contacts?search=${encodeURIComponent('u%')}`, auth)).text()), [], '% is a plain character');
  });

  test('bad filters are shown on the page with 400, never a 500', async () => {
    for (const q of ['list=nope', 'status=bogus', 'after=garbage', `search=${'x'.repeat(300)}`, "list=' OR 1=1 --"]) {
      const res = await call(notify(), `/notify/admin/contacts?${q}`, auth);
      assert.equal(res.status, 400, q);
      assert.match(await res.text(), /class="note"/, q);
    }
  });
});
