import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { NotifyError } from '../../src/errors.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

/**
 * What the library itself refuses and answers where the HTTP routes refuse bad input first: each
 * refusal's code, field and message with nothing written, contacts found by id text or by address,
 * count() reading only the list and the segment, the cursor's bounds, list names and descriptions.
 */

/** The call fails with that NotifyError: code, details (exactly) and message (when given). */
async function refused(call: () => Promise<unknown>, code: string, details: Record<string, unknown> | undefined, message?: string | RegExp): Promise<void> {
  await assert.rejects(call, (e: unknown) => {
    assert.ok(e instanceof NotifyError, `a NotifyError, not ${String(e)}`);
    assert.equal(e.code, code);
    assert.deepEqual(e.details, details);
    if (typeof message === 'string') assert.equal(e.message, message);
    else if (message) assert.match(e.message, message);
    return true;
  });
}

const NAME_MESSAGE = 'Contact name must be a single line of at most 200 characters';
const LISTS_MESSAGE = 'Contact lists must be names of 1 to 100 characters';
const ATTRIBUTES_MESSAGE = 'Contact attributes must be an object';
const LIST_NAME_MESSAGE = 'A list name must be 1 to 100 characters';

/** attributes whose JSON text is exactly `length` characters */
function attributesOfLength(length: number): Record<string, string> {
  const empty = JSON.stringify({ a: '' }).length;
  return { a: 'x'.repeat(length - empty) };
}

forEachEngine('contacts.upsert: what it refuses, with nothing written', (h) => {
  const notify = useNotify(h);

  test('a missing input is an invalid address, not a crash', async () => {
    await refused(() => notify().contacts.upsert(undefined as never), 'INVALID_EMAIL', { email: undefined });
  });

  test('name: text of one line, at most 200 characters', async () => {
    const n = notify();
    for (const name of [5, 'x'.repeat(201), 'two\nlines']) {
      await refused(() => n.contacts.upsert({ email: 'named@example.com', name } as never), 'INVALID_INPUT', { field: 'name' }, NAME_MESSAGE);
    }
    assert.equal(await n.contacts.get('named@example.com'), undefined, 'nothing written');
    assert.equal((await n.contacts.upsert({ email: 'named@example.com', name: 'x'.repeat(200) })).name, 'x'.repeat(200));
  });

  test('status: one of the contact statuses, named in the refusal', async () => {
    await refused(() => notify().contacts.upsert({ email: 'status@example.com', status: 'gone' } as never), 'INVALID_INPUT', { field: 'status' }, /^Contact status must be one of subscribed, .*unsubscribed/);
    assert.equal(await notify().contacts.get('status@example.com'), undefined);
  });

  test('lists: an array of names of 1 to 100 characters', async () => {
    const n = notify();
    for (const lists of ['news', [5], [''], ['x'.repeat(101)], ['news', null]]) {
      await refused(() => n.contacts.upsert({ email: 'lists@example.com', lists } as never), 'INVALID_INPUT', { field: 'lists' }, LISTS_MESSAGE);
    }
    assert.equal(await n.contacts.get('lists@example.com'), undefined, 'nothing written');
    const long = 'L'.repeat(100);
    assert.deepEqual((await n.contacts.upsert({ email: 'lists@example.com', lists: [long] })).lists, [long]);
  });

  test('attributes: an object whose JSON is at most 16 KiB', async () => {
    const n = notify();
    for (const attributes of ['city', null, ['Oslo'], 7]) {
      await refused(() => n.contacts.upsert({ email: 'attrs@example.com', attributes } as never), 'INVALID_INPUT', { field: 'attributes' }, ATTRIBUTES_MESSAGE);
    }
    await refused(() => n.contacts.upsert({ email: 'attrs@example.com', attributes: attributesOfLength(16 * 1024 + 1) }), 'INVALID_INPUT', { field: 'attributes' }, 'Contact attributes must be under 16384 bytes of JSON');
    assert.equal(await n.contacts.get('attrs@example.com'), undefined, 'nothing written');
    const most = attributesOfLength(16 * 1024);
    assert.deepEqual((await n.contacts.upsert({ email: 'attrs@example.com', attributes: most })).attributes, most);
  });
});

forEachEngine('contacts: found by id, id text or address', (h) => {
  const notify = useNotify(h);

  test('an id as text of several digits, an address starting or ending with digits, an address with spaces around it', async () => {
    const n = notify();
    const made = [];
    for (let i = 0; i < 12; i++) made.push(await n.contacts.upsert({ email: `c${i}@example.com` }));
    const twelfth = made[11];
    assert.ok(twelfth.id >= 10, 'an id of two digits');
    assert.equal((await n.contacts.get(String(twelfth.id)))?.email, twelfth.email);
    const digitsFirst = await n.contacts.upsert({ email: '123@example.com' });
    assert.equal((await n.contacts.get('123@example.com'))?.id, digitsFirst.id);
    const digitsLast = await n.contacts.upsert({ email: 'dee@example.org2' });
    assert.equal((await n.contacts.get('dee@example.org2'))?.id, digitsLast.id);
    assert.equal((await n.contacts.get('  C3@Example.com '))?.id, made[3].id);
    const many = await createContactsService(n.context).getMany([' C4@example.com ', 'not an address']);
    assert.deepEqual([...many.keys()], ['c4@example.com']);
  });

  test('an unknown contact is NOT_FOUND, named (at most 254 characters of it)', async () => {
    const n = notify();
    await n.lists.create({ name: 'found-news' });
    await refused(() => n.contacts.subscribe('nobody@example.com', 'found-news'), 'NOT_FOUND', { field: 'contact' }, 'No contact "nobody@example.com"');
    const long = `${'y'.repeat(300)}@example.com`;
    await refused(() => n.contacts.unsubscribe(long), 'NOT_FOUND', { field: 'contact' }, `No contact ${JSON.stringify(long.slice(0, 254))}`);
  });

  test('count() reads the list and the segment only: a status or search beside them changes nothing', async () => {
    const n = notify();
    await n.lists.create({ name: 'counted' });
    await n.contacts.upsert({ email: 'count-a@example.com', lists: ['counted'] });
    await n.contacts.upsert({ email: 'count-b@example.com', lists: ['counted'] });
    assert.equal(await n.contacts.count({ list: 'counted', status: 'bounced', search: 'nobody' } as never), 2);
  });
});

forEachEngine('contacts: list membership through the API', (h) => {
  const notify = useNotify(h);

  test('unsubscribe with a null list unsubscribes from everything, its event row naming the API', async () => {
    const n = notify();
    const ann = await n.contacts.upsert({ email: 'null-list@example.com' });
    assert.equal((await n.contacts.unsubscribe(ann.id, null as never)).status, 'unsubscribed');
    const data = await n.contacts.export(ann.id);
    assert.deepEqual(
      data?.events.filter((e) => e.type === 'unsubscribe').map((e) => e.metadata.source),
      ['api'],
    );
  });

  test('a contact who was never on the list is kept off it: a later upsert naming it does not join them', async () => {
    const n = notify();
    await n.lists.create({ name: 'kept-off' });
    const bob = await n.contacts.upsert({ email: 'kept-off@example.com' });
    const left = await n.contacts.unsubscribe(bob.id, 'kept-off');
    assert.equal(left.status, 'subscribed', 'a list left is no opt-out of everything');
    assert.deepEqual((await n.contacts.export(bob.id))?.lists.map((l) => [l.name, l.status]), [['kept-off', 'unsubscribed']]);
    assert.deepEqual((await n.contacts.upsert({ email: 'kept-off@example.com', lists: ['kept-off'] })).lists, []);
  });
});

forEachEngine('contacts.list: query checks', (h) => {
  const notify = useNotify(h);
  const cursor = (text: string) => Buffer.from(text).toString('base64url');

  test('limit, status and search refusals name their field', async () => {
    const n = notify();
    await refused(() => n.contacts.list({ limit: 0 }), 'INVALID_INPUT', { field: 'limit' }, 'limit must be a whole number from 1 to 1000');
    await refused(() => n.contacts.list({ status: 'gone' } as never), 'INVALID_INPUT', { field: 'status' }, /^status must be one of subscribed, /);
    const searchMessage = 'search must be text of at most 200 characters, without NUL';
    for (const search of [123, 'x'.repeat(201)]) await refused(() => n.contacts.list({ search } as never), 'INVALID_INPUT', { field: 'search' }, searchMessage);
    assert.deepEqual((await n.contacts.list({ search: 'x'.repeat(200) })).contacts, []);
  });

  test('after: only a cursor text of at most 40 characters that decodes to c:<id>', async () => {
    const n = notify();
    for (let i = 0; i < 3; i++) await n.contacts.upsert({ email: `page-${i}@example.com` });
    const first = await n.contacts.list({ limit: 1 });
    assert.ok(first.next);
    const rest = (after: string) => n.contacts.list({ after }).then((p) => p.contacts.map((c) => c.email));
    // base64url decoding skips spaces: padded to exactly 40 characters it is still the same cursor
    assert.deepEqual(await rest(first.next.padEnd(40, ' ')), ['page-1@example.com', 'page-2@example.com']);
    for (const after of [123, first.next.padEnd(41, ' '), cursor(`x${Buffer.from(first.next, 'base64url').toString()}`)]) {
      await refused(() => n.contacts.list({ after } as never), 'INVALID_INPUT', { field: 'after' }, 'after must be the `next` cursor of a previous page');
    }
  });
});

forEachEngine('lists: names, descriptions and what refuses them', (h) => {
  const notify = useNotify(h);
  const subscribeTo = async (n: Notify, list: unknown) => n.contacts.subscribe((await n.contacts.upsert({ email: 'joiner@example.com' })).id, list as string);

  test('a list to join: 1 to 100 characters, else INVALID_INPUT; an unknown one NOT_FOUND naming it', async () => {
    const n = notify();
    for (const name of ['', 5, 'x'.repeat(101)]) await refused(() => subscribeTo(n, name), 'INVALID_INPUT', { field: 'list' }, LIST_NAME_MESSAGE);
    const hundred = 'x'.repeat(100);
    await refused(() => subscribeTo(n, hundred), 'NOT_FOUND', { field: 'list', list: hundred }, `No list named ${JSON.stringify(hundred)}`);
    await refused(() => n.lists.delete(''), 'INVALID_INPUT', { field: 'name' }, LIST_NAME_MESSAGE);
  });

  test('create: an object, a well-formed name, a description of at most 1000 characters, public true or false', async () => {
    const n = notify();
    for (const input of [null, 'news']) await refused(() => n.lists.create(input as never), 'INVALID_INPUT', undefined, 'lists.create() needs an object');
    await refused(() => n.lists.create({ name: '-news' }), 'INVALID_INPUT', { field: 'name' }, 'A list name must be 1 to 100 letters, digits, spaces or _ . : - (starting with a letter or digit)');
    const descriptionMessage = 'A list description must be text of at most 1000 characters';
    for (const description of [5, 'd'.repeat(1001)]) await refused(() => n.lists.create({ name: 'described', description } as never), 'INVALID_INPUT', { field: 'description' }, descriptionMessage);
    await refused(() => n.lists.create({ name: 'described', public: 'yes' } as never), 'INVALID_INPUT', { field: 'public' }, 'public must be true or false');
    assert.equal((await n.lists.list()).length, 0, 'nothing created');
    assert.equal((await n.lists.create({ name: 'described', description: 'd'.repeat(1000) })).description, 'd'.repeat(1000));
    await refused(() => n.lists.create({ name: 'DESCRIBED' }), 'DUPLICATE', { field: 'name' }, 'A list named "DESCRIBED" already exists (names are unique whatever their case)');
  });

  test('delete: a list a campaign sends to is refused, naming the campaigns', async () => {
    const n = notify();
    await n.lists.create({ name: 'audience' });
    await n.campaigns.create({ subject: 'Hi', html: '<p>Hi</p>', list: 'audience' });
    await refused(() => n.lists.delete('audience'), 'INVALID_INPUT', { field: 'name' }, 'List "audience" is the audience of 1 campaign(s) and cannot be deleted');
  });
});

forEachEngine('segments: what they refuse', (h) => {
  const notify = useNotify(h);

  test('a list or a campaign that does not exist is NOT_FOUND, naming it', async () => {
    const n = notify();
    await refused(() => n.contacts.list({ segment: { list: 'nowhere' } }), 'NOT_FOUND', { field: 'segment', list: 'nowhere' }, 'The segment names a list that does not exist: "nowhere"');
    await refused(() => n.contacts.count({ segment: { opened: 999 } }), 'NOT_FOUND', { field: 'segment', campaign: 999 }, 'The segment names a campaign that does not exist: 999');
  });

  test('an attribute name starts with a letter, digit or _; a time is the whole text', async () => {
    const n = notify();
    await refused(() => n.contacts.list({ segment: { attr: '-city', eq: 'Oslo' } }), 'INVALID_INPUT', { field: 'segment.attr' });
    for (const at of ['12026-01-01', '2026-01-01junk', ' 2026-01-01']) {
      await refused(() => n.contacts.list({ segment: { createdAfter: at } }), 'INVALID_INPUT', { field: 'segment.createdAfter' });
    }
    assert.deepEqual((await n.contacts.list({ segment: { createdAfter: '2026-01-01' } })).contacts, []);
  });
});

forEachEngine('upsertMany (imports): an erased address that had not opted out comes back as new', (h) => {
  const notify = useNotify(h);

  test('a contact erased while only transactional mail went to them is subscribed when imported again', async () => {
    const n = notify();
    const once = await n.contacts.upsert({ email: 'receipt@example.com', status: 'transactional' });
    assert.equal(await n.contacts.erase(once.id), true);
    await createContactsService(n.context).upsertMany([{ input: { email: 'receipt@example.com' } }]);
    assert.equal((await n.contacts.get('receipt@example.com'))?.status, 'subscribed');
  });
});
