import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { parseCsv } from '../../src/core/csv.ts';
import { exportContactsCsv } from '../../src/core/export.ts';
import { type ImportOptions, importContacts } from '../../src/core/import.ts';
import { isNotifyError, type NotifyError } from '../../src/errors.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { importText } from './helpers.ts';

/*
 * What an import file's columns, cells and bytes become (the stored contacts, the counts, the
 * reasons of rejected rows, the progress calls), and what an export writes, where the other import
 * tests leave it unread.
 */

/** Imports the source exactly as given (its chunks unsplit), so a test decides where chunks end. */
const importChunks = (n: Notify, chunks: (string | Uint8Array)[], opts?: ImportOptions) => importContacts(createContactsService(n.context), chunks, opts);
const stored = async (n: Notify, email: string) => {
  const c = await n.contacts.get(email);
  return c && { name: c.name, status: c.status, lists: c.lists, attributes: c.attributes };
};
const failure = async (p: Promise<unknown>): Promise<NotifyError> => {
  try {
    await p;
  } catch (err) {
    if (isNotifyError(err)) return err;
    throw err;
  }
  throw new Error('expected a NotifyError');
};
const exported = async (n: Notify, list: string) => {
  let csv = '';
  for await (const line of exportContactsCsv(n.context, { list })) csv += line;
  const rows: string[][] = [];
  for await (const r of parseCsv([csv])) rows.push(r);
  return rows;
};

forEachEngine('import: columns and cells', (h) => {
  const notify = useNotify(h);

  test('every spelling of the email and name columns is read', async () => {
    await importText(notify(), 'E-Mail Address,Full Name\nfull@example.com,Fay Full\n');
    assert.equal((await stored(notify(), 'full@example.com'))?.name, 'Fay Full');
    const pairs = [
      ['fname', 'lname'],
      ['FirstName', 'LastName'],
      ['FIRSTNAME', 'LASTNAME'],
      ['Given Name', 'Surname'],
      ['given_name', 'Family Name'],
      ['firstName', 'lastName'],
    ];
    for (const [i, [first, last]] of pairs.entries()) {
      await importText(notify(), `e_mail,${first},${last}\nsplit${i}@example.com,Ada,Lovelace\n`);
      assert.deepEqual(await stored(notify(), `split${i}@example.com`), { name: 'Ada Lovelace', status: 'subscribed', lists: [], attributes: {} }, `${first} + ${last}`);
    }
  });

  test('attribute keys: camelCase split, runs of other characters one underscore, none at the ends; empty and created_at columns dropped', async () => {
    const csv = 'email,phoneNumber,Plan  -  Tier,(Region),,created_at\nkeys@example.com,555,gold,north,junk,2020-01-01\n';
    assert.equal((await importText(notify(), csv)).created, 1);
    assert.deepEqual((await stored(notify(), 'keys@example.com'))?.attributes, { phone_number: '555', plan_tier: 'gold', region: 'north' });
  });

  test('cells are trimmed; of two columns with one key the first non-empty wins; TAGS are trimmed, an empty one left out; a blank-looking line is skipped', async () => {
    const csv = 'email,name,plan,Plan,tags\ntrim@example.com,  Ann  , pro , free ," vip ,, blog "\n   \ndup@example.com,,,free,\n';
    const res = await importText(notify(), csv);
    assert.deepEqual({ created: res.created, rejected: res.rejected }, { created: 2, rejected: [] });
    assert.deepEqual(await stored(notify(), 'trim@example.com'), { name: 'Ann', status: 'subscribed', lists: ['blog', 'vip'], attributes: { plan: 'pro' } });
    assert.deepEqual((await stored(notify(), 'dup@example.com'))?.attributes, { plan: 'free' });
  });

  test('extra fields of spaces are fine, extra data is refused with both counts', async () => {
    const res = await importText(notify(), 'email,name\nspaces@example.com,Sam,  , \nextra@example.com,Ed,x\n');
    assert.equal(res.created, 1);
    assert.deepEqual(res.rejected, [{ line: 3, reason: 'The row has 3 fields, the header 2' }]);
  });

  test("a leading quote is removed only before a formula character, and only one", async () => {
    await importText(notify(), "email,a,b,c\nquote@example.com,'hello,'=1,=-1\n");
    assert.deepEqual((await stored(notify(), 'quote@example.com'))?.attributes, { a: "'hello", b: '=1', c: '=-1' });
  });

  test('status words of other tools, in any case; an unknown one is named, cut to 40 characters', async () => {
    const long = `x${'y'.repeat(60)}`;
    const csv = `email,status\nw1@example.com,unsubscribe\nw2@example.com,Active\nw3@example.com,CONFIRMED\nw4@example.com,UNSUBSCRIBED\nw5@example.com,${long}\n`;
    const res = await importText(notify(), csv);
    const statuses = await Promise.all([1, 2, 3, 4].map(async (i) => (await stored(notify(), `w${i}@example.com`))?.status));
    assert.deepEqual(statuses, ['unsubscribed', 'subscribed', 'subscribed', 'unsubscribed']);
    assert.deepEqual(res.rejected, [
      { line: 6, reason: `Unknown status "${long.slice(0, 40)}" (expected subscribed, pending, transactional, unsubscribed, bounced, complained or cleaned)` },
    ]);
  });

  test('a file without an email column names what it found, or nothing', async () => {
    const err = await failure(importText(notify(), 'Mail,Full Name\nz@example.com,Z\n'));
    assert.equal(err.message, 'The CSV header has no email column (one of: email, email_address, e_mail, e_mail_address; found: mail, full_name)');
    assert.deepEqual(err.details, { header: ['Mail', 'Full Name'] });
    const blank = await failure(importText(notify(), '\nz@example.com\n'));
    assert.equal(blank.message, 'The CSV header has no email column (one of: email, email_address, e_mail, e_mail_address; found: nothing)');
  });
});

forEachEngine('import: statuses and counts', (h) => {
  const notify = useNotify(h);

  test('a new contact takes a pending status cell; a transactional one moves to pending', async () => {
    await notify().contacts.upsert({ email: 'receipts@example.com', status: 'transactional' });
    const res = await importText(notify(), 'email,status\nfresh@example.com,pending\nreceipts@example.com,pending\n');
    assert.deepEqual({ created: res.created, updated: res.updated }, { created: 1, updated: 1 });
    assert.equal((await stored(notify(), 'fresh@example.com'))?.status, 'pending');
    assert.equal((await stored(notify(), 'receipts@example.com'))?.status, 'pending');
  });

  test('an erased address that had unsubscribed stays unsubscribed whatever status the file gives it', async () => {
    for (const status of ['subscribed', 'pending']) {
      const email = `erased-${status}@example.com`;
      await notify().contacts.upsert({ email, status: 'unsubscribed' });
      await notify().contacts.erase(email);
      assert.equal((await importText(notify(), `email,status\n${email},${status}\n`)).created, 1);
      assert.equal((await stored(notify(), email))?.status, 'unsubscribed', status);
    }
  });

  test('a row that says what is stored, subscribed included, counts as unchanged', async () => {
    await notify().contacts.upsert({ email: 'same@example.com', name: 'Sam', lists: ['news'] });
    await notify().contacts.upsert({ email: 'bounced@example.com', status: 'bounced' });
    await notify().contacts.upsert({ email: 'mailed@example.com', status: 'transactional' });
    const res = await importText(notify(), 'email,name,status,lists\nsame@example.com,Sam,subscribed,news\nbounced@example.com,,subscribed,\nmailed@example.com,,transactional,\n');
    assert.deepEqual({ created: res.created, updated: res.updated, unchanged: res.unchanged }, { created: 0, updated: 0, unchanged: 3 });
  });

  test('progress is reported once per written batch of 500, and once per rejected row', async () => {
    const calls: number[] = [];
    const onProgress = (p: { rows: number }) => calls.push(p.rows);
    await importText(notify(), 'email\np1@example.com\np2@example.com\np3@example.com\n', { onProgress });
    assert.deepEqual(calls, [3]);
    calls.length = 0;
    await importText(notify(), 'email\nnot-an-address\n', { onProgress });
    assert.deepEqual(calls, [1]);
    calls.length = 0;
    const rows = Array.from({ length: 501 }, (_, i) => `batch${i}@example.com`).join('\n');
    const res = await importChunks(notify(), [`email\n${rows}\n`], { onProgress });
    assert.equal(res.created, 501);
    assert.deepEqual(calls, [500, 501]);
  });
});

forEachEngine('import: the bytes of the file', (h) => {
  const notify = useNotify(h);

  test('a doubled quote inside a quoted cell holding a comma', async () => {
    await importChunks(notify(), ['email,note\nq@example.com,"say ""hi"", then go"\n']);
    assert.equal((await stored(notify(), 'q@example.com'))?.attributes.note, 'say "hi", then go');
  });

  test('only a byte order mark at the very start of the file is dropped', async () => {
    await importChunks(notify(), ['\uFEFFemail,note\nbom1@example.com,a\uFEFFb\nbom2@example.com,c', '\uFEFFd\n']);
    assert.equal((await stored(notify(), 'bom1@example.com'))?.attributes.note, 'a\uFEFFb');
    assert.equal((await stored(notify(), 'bom2@example.com'))?.attributes.note, 'c\uFEFFd');
    await importChunks(notify(), ['email,note\nbom3@example.com,e\uFEFFf\n']);
    assert.equal((await stored(notify(), 'bom3@example.com'))?.attributes.note, 'e\uFEFFf', 'a file without one keeps the first');
  });

  test('a last record ended by CR alone keeps its whole last cell', async () => {
    await importChunks(notify(), ['email,plan\r\ncr@example.com,pro\r']);
    assert.equal((await stored(notify(), 'cr@example.com'))?.attributes.plan, 'pro');
  });

  test('a last quoted cell that starts with CR, at the end of the file without a line break, is read whole', async () => {
    await importChunks(notify(), ['email,plan\ncr2@example.com,"\rpro"']);
    assert.equal((await stored(notify(), 'cr2@example.com'))?.attributes.plan, 'pro');
  });

  test('a bad byte after a character of 2, 3 or 4 bytes (lead bytes C3, E0, E2, F0) that chunks cut anywhere is named on its line', async () => {
    const good = new TextEncoder().encode('email,note\na@x.io,é\nb@x.io,अ\nc@x.io,€\nd@x.io,😀\n');
    for (let at = 0; at <= good.length; at++) {
      const bytes = new Uint8Array([...good.subarray(0, at), 0xff, ...good.subarray(at)]);
      const line = new TextDecoder().decode(good.subarray(0, at)).split('\n').length;
      // three chunks: the bad byte in the last, which may begin with the rest of a character the first two cut
      for (let cut = Math.max(0, at - 5); cut <= at; cut++) {
        for (let first = Math.max(0, cut - 3); first <= cut; first++) {
          const err = await failure(importChunks(notify(), [bytes.subarray(0, first), bytes.subarray(first, cut), bytes.subarray(cut)]));
          assert.deepEqual(err.details, { line }, `a bad byte at ${at}, chunks cut at ${first} and ${cut}`);
        }
      }
    }
  });

  test('a quote that never closes stops the import at its line after what came before, even past a megabyte', async () => {
    const rest = 'x@example.com,filler\n'.repeat(60_000);
    const res = await importChunks(notify(), ['email,note\nbefore@example.com,ok\nopen@example.com,"never closed\n', rest, rest]);
    assert.equal(res.created, 1);
    assert.deepEqual(res.rejected, [{ line: 3, reason: 'A quoted field never closes; the rest of the file was not read' }]);
    assert.equal(await notify().contacts.get('x@example.com'), undefined);
  });

  test('bytes that are not UTF-8 at the very end of the file are refused, naming their line', async () => {
    const err = await failure(importChunks(notify(), [Buffer.from('email\nend@example.com\n'), Buffer.from([0x61, 0xc3])]));
    assert.equal(err.code, 'INVALID_INPUT');
    assert.deepEqual(err.details, { line: 3 });
    assert.match(err.message, /^The file is not UTF-8 text \(line 3\)/);
    assert.equal(await notify().contacts.get('end@example.com'), undefined);
  });

  test('a character cut by bad bytes where one chunk ends and the next begins is named on its own line', async () => {
    // line 3 is `a` then 0xC3 (the start of a two-byte character) then `b`, which cannot follow it
    const err = await failure(importChunks(notify(), [Buffer.from([...Buffer.from('email\ncut@example.com\na'), 0xc3]), Buffer.from('b\nmore@example.com\n')]));
    assert.deepEqual(err.details, { line: 3 });
    assert.match(err.message, /^The file is not UTF-8 text \(line 3\)/);
  });
});

forEachEngine('export: header and cells', (h) => {
  const notify = useNotify(h);

  test('attribute columns come sorted after the fixed ones, never repeating one; no name and a null are empty cells; objects are JSON', async () => {
    await notify().contacts.upsert({ email: 'exp@example.com', lists: ['exp'], attributes: { zeta: '1', alpha: '2', status: 'vip', obj: { a: 1 }, none: null } });
    const [header, row] = await exported(notify(), 'exp');
    assert.deepEqual(header, ['email', 'name', 'status', 'lists', 'created_at', 'alpha', 'none', 'obj', 'zeta']);
    assert.deepEqual([...row.slice(0, 4), ...row.slice(5)], ['exp@example.com', '', 'subscribed', 'exp', '2', '', '{"a":1}', '1']);
  });

  test('an unknown status or list is refused with its code, message and field', async () => {
    const status = await failure(exportContactsCsv(notify().context, { status: 'gone' }).next());
    assert.deepEqual(
      { code: status.code, message: status.message, details: status.details },
      { code: 'INVALID_INPUT', message: 'Status must be one of subscribed, pending, transactional, unsubscribed, bounced, complained', details: { field: 'status' } },
    );
    const list = await failure(exportContactsCsv(notify().context, { list: 'nope' }).next());
    assert.deepEqual({ code: list.code, message: list.message, details: list.details }, { code: 'NOT_FOUND', message: 'No list named "nope"', details: { list: 'nope' } });
  });
});
