import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseCsv } from '../../src/core/csv.ts';
import { exportContactsCsv } from '../../src/core/export.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, freshDatabaseUrl, testOptions, useNotify } from '../helpers/engines.ts';
import { fixture, importText, MAILCHIMP } from './helpers.ts';

const text = async (lines: AsyncIterable<string>) => {
  let out = '';
  for await (const l of lines) out += l;
  return out;
};
const rows = async (csv: string) => {
  const out: string[][] = [];
  for await (const r of parseCsv([csv])) out.push(r);
  return out;
};
const snapshot = async (n: Notify, emails: string[]) =>
  Promise.all(
    emails.map(async (e) => {
      const c = await n.contacts.get(e);
      return c && { email: c.email, name: c.name, status: c.status, lists: c.lists, attributes: c.attributes };
    }),
  );

forEachEngine('contacts:export', (h) => {
  const notify = useNotify(h);
  const emails = ['ada@example.com', 'grace@example.com', 'linus@example.com', 'margaret@example.com', '-dash@example.com', 'odd@example.com'];

  test('writes email,name,status,lists,created_at,<attributes>; formula-looking cells get a leading quote', async () => {
    await importText(notify(), fixture(MAILCHIMP.subscribed));
    await importText(notify(), fixture(MAILCHIMP.unsubscribed));
    await importText(notify(), fixture(MAILCHIMP.cleaned));
    await notify().contacts.upsert({ email: '-dash@example.com', name: '=HYPERLINK("http://x.test","click")', lists: ['@team', 'a,b'] });
    await notify().contacts.upsert({ email: 'odd@example.com', name: 'Odd "Quotes", Commas', attributes: { formula: '+1+2', note: 'two\r\nlines', at: '@SUM(A1)' } });
    const csv = await text(exportContactsCsv(notify().context, { pageSize: 2 }));
    const [header, ...body] = await rows(csv);
    assert.deepEqual(header.slice(0, 5), ['email', 'name', 'status', 'lists', 'created_at']);
    assert.ok(header.includes('phone_number') && header.includes('unsub_reason') && header.includes('clean_time'));
    assert.equal(body.length, 6, 'every contact once across pages of 2');
    const dash = body.find((r) => r[0] === "'-dash@example.com")!;
    assert.equal(dash[1], '\'=HYPERLINK("http://x.test","click")');
    assert.equal(dash[3], '\'@team,"a,b"');
    const odd = body.find((r) => r[0] === 'odd@example.com')!;
    assert.equal(odd[header.indexOf('formula')], "'+1+2");
    assert.equal(odd[header.indexOf('at')], "'@SUM(A1)");
    assert.equal(odd[header.indexOf('note')], 'two\r\nlines');
    assert.match(odd[4], /^\d{4}-\d\d-\d\dT/);
    assert.ok(!csv.split('\r\n').some((l) => /^[=+\-@]/.test(l)), 'no line starts with a formula character');
  });

  test('the export re-imports to the same data in an empty database', async () => {
    const csv = await text(exportContactsCsv(notify().context));
    const db = freshDatabaseUrl(h.engine);
    const other = await createNotify(testOptions(db.url));
    after(async () => {
      await other.close();
      db.cleanup();
    });
    const res = await importText(other, csv);
    assert.deepEqual([res.created, res.rejected], [6, []]);
    assert.deepEqual(await snapshot(other, emails), await snapshot(notify(), emails));
    const again = await importText(other, csv);
    assert.equal(again.unchanged, 6);
  });

  test('--list and --status filter; an unknown list is NOT_FOUND, an unknown status INVALID_INPUT', async () => {
    const vip = await rows(await text(exportContactsCsv(notify().context, { list: 'VIP' })));
    assert.deepEqual(
      vip.slice(1).map((r) => r[0]),
      ['ada@example.com'],
    );
    const bounced = await rows(await text(exportContactsCsv(notify().context, { status: 'bounced' })));
    assert.deepEqual(
      bounced.slice(1).map((r) => r[0]),
      ['grace@example.com'],
    );
    const both = await rows(await text(exportContactsCsv(notify().context, { list: 'Blog, weekly', status: 'subscribed' })));
    assert.deepEqual(
      both.slice(1).map((r) => r[0]),
      ['linus@example.com'],
    );
    await assert.rejects(text(exportContactsCsv(notify().context, { list: 'nope' })), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(text(exportContactsCsv(notify().context, { status: 'gone' })), (e) => isNotifyError(e, 'INVALID_INPUT'));
  });
});
