import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { parseCsv } from '../../src/core/csv.ts';
import { importContacts } from '../../src/core/import.ts';
import { isNotifyError } from '../../src/errors.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

async function* chunks(...parts: string[]) {
  yield* parts;
}
const all = async (src: AsyncIterable<string[]>) => {
  const out: string[][] = [];
  for await (const r of src) out.push(r);
  return out;
};

test('CSV: quotes, doubled quotes, embedded newlines, CRLF, BOM, chunk boundaries', async () => {
  const rows = await all(parseCsv(chunks('\uFEFFemail,name\r\n"a@x.io","Smith, ""Jo""', '"\r\nb@x.io,"line1\nline2"\n', 'c@x.io,')));
  assert.deepEqual(rows, [
    ['email', 'name'],
    ['a@x.io', 'Smith, "Jo"'],
    ['b@x.io', 'line1\nline2'],
    ['c@x.io', ''],
  ]);
});

forEachEngine('contacts:import', (h) => {
  const notify = useNotify(h);

  test('imports good rows, reports bad ones with their line, never lifts a suppression', async () => {
    const contacts = createContactsService(notify().context);
    await notify().contacts.upsert({ email: 'gone@example.com', status: 'unsubscribed' });
    const csv = 'Email,Name,Plan\nann@example.com,Ann,pro\nnot-an-email,X,\n\ngone@example.com,Gone,\n"evil@example.com\r\nBcc: x@y.z",E,\n';
    const res = await importContacts(contacts, chunks(csv), { lists: ['imported'] });
    assert.equal(res.imported, 2);
    assert.deepEqual(
      res.rejected.map((r) => r.line),
      [3, 6],
    );
    const ann = await notify().contacts.get('ann@example.com');
    assert.deepEqual(ann?.attributes, { plan: 'pro' });
    assert.deepEqual(ann?.lists, ['imported']);
    assert.equal((await notify().contacts.get('gone@example.com'))?.status, 'unsubscribed');
  });

  test('a file without an email column is refused before anything is stored', async () => {
    const contacts = createContactsService(notify().context);
    await assert.rejects(importContacts(contacts, chunks('mail,name\nz@example.com,Z\n')), (e) => isNotifyError(e, 'INVALID_INPUT'));
    assert.equal(await notify().contacts.get('z@example.com'), undefined);
  });
});
