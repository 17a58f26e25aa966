import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { importText } from './helpers.ts';

forEachEngine('contacts:import with bad input', (h) => {
  const notify = useNotify(h);
  const count = async () => Number((await notify().context.store.db.selectFrom('notify_contacts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  test('no email column, an empty file: INVALID_INPUT and nothing stored', async () => {
    await assert.rejects(importText(notify(), 'Name,Phone\nZed,1\n'), (e) => isNotifyError(e, 'INVALID_INPUT') && /no email column/.test(e.message));
    await assert.rejects(importText(notify(), ''), (e) => isNotifyError(e, 'INVALID_INPUT') && /empty/.test(e.message));
    assert.equal(await count(), 0);
  });

  test('a header-only file imports nothing and rejects nothing', async () => {
    assert.deepEqual(await importText(notify(), 'Email Address,First Name\r\n'), { created: 0, updated: 0, unchanged: 0, rejected: [], imported: 0 });
  });

  test('invalid addresses, a ragged row and an unknown status are rejected with their line; the rest is imported', async () => {
    const csv = 'email,name,status\nok1@example.com,One,\nnot-an-email,Bad,\n,No Address,\nok2@example.com,Two,,extra\nok3@example.com,Three,,,\nok4@example.com,Four,maybe\nok5@example.com\n';
    const res = await importText(notify(), csv);
    assert.deepEqual(
      res.rejected.map((r) => r.line),
      [3, 4, 5, 7],
    );
    assert.match(res.rejected[2].reason, /4 fields, the header 3/);
    assert.match(res.rejected[3].reason, /Unknown status "maybe"/);
    assert.equal(res.created, 3, 'ok1, ok3 (empty trailing cells are fine) and ok5 (a short row)');
    assert.equal(await notify().contacts.get('ok2@example.com'), undefined);
  });

  test('one address twice in a file: the second row merges into the first (updated), never a second contact', async () => {
    const res = await importText(notify(), 'email,name,plan\ndup@example.com,Dup,free\nDUP@example.com,,pro\ndup@example.com,Dup,pro\n');
    assert.deepEqual([res.created, res.updated, res.unchanged], [1, 1, 1]);
    assert.deepEqual((await notify().contacts.get('dup@example.com'))?.attributes, { plan: 'pro' });
  });

  test('an unterminated quote: rows before it are imported, the rest is reported, not swallowed into a field', async () => {
    const res = await importText(notify(), 'email,name\nq1@example.com,"Q One"\nq2@example.com,"Q Two\nq3@example.com,Q Three\n');
    assert.equal(res.created, 1);
    assert.deepEqual(res.rejected, [{ line: 3, reason: 'A quoted field never closes; the rest of the file was not read' }]);
    assert.equal(await notify().contacts.get('q3@example.com'), undefined);
  });

  test('a Latin-1 file is refused as not UTF-8 (naming the line); with encoding latin1 it reads right', async () => {
    const latin1 = Buffer.from('email,name\nlat1@example.com,Lat\nlat2@example.com,José Müller\n', 'latin1');
    await assert.rejects(importText(notify(), latin1), (e) => isNotifyError(e, 'INVALID_INPUT') && /not UTF-8 text \(line 3\).*--encoding latin1/.test(e.message));
    await importText(notify(), latin1, { encoding: 'latin1' });
    assert.equal((await notify().contacts.get('lat2@example.com'))?.name, 'José Müller');
  });

  test('UTF-8 characters split across chunk boundaries arrive whole', async () => {
    await importText(notify(), 'email,name\nutf@example.com,Zoë Ångström 日本語 🙂\n');
    assert.equal((await notify().contacts.get('utf@example.com'))?.name, 'Zoë Ångström 日本語 🙂');
  });
});
