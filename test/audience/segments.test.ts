import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { allEmails, reached } from './helpers.ts';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
/** Apple Mail Privacy Protection fetches every image with this bare user agent, read or not. */
const APPLE_PREFETCH = 'Mozilla/5.0';

const PEOPLE: [string, Record<string, unknown>][] = [
  ['ann', { plan: 'pro', age: 34, tags: ['beta', 'vip'], city: 'Zürich', note: "' OR 1=1 --" }],
  ['bob', { plan: 'free', age: 19, tags: ['beta'], city: 'Berlin', note: '100%_off' }],
  ['cat', { plan: 'pro', age: '40', vip: true, note: 'back\\slash' }],
  ['dan', { age: 52.5, vip: false }],
  ['eve', {}],
];

forEachEngine('segments', (h) => {
  let sink: SmtpSink;
  let n: Notify;
  const ids = new Map<string, number>();
  before(async () => {
    sink = await startSmtpSink();
    n = await createNotify(testOptions(h.url, { mailer: sink.url }));
    await n.lists.create({ name: 'Members' });
    for (const [who, attributes] of PEOPLE) {
      const c = await n.contacts.upsert({ email: `${who}@example.com`, attributes, lists: who === 'eve' ? [] : ['members'] });
      ids.set(who, c.id);
    }
  });
  after(async () => {
    await n.close();
    await sink.close();
  });

  const who = async (segment: unknown) => (await allEmails(n, { segment: segment as never })).map((e) => e.split('@')[0]);

  test('attribute operators compare by JSON type; a missing attribute is never equal, so `not` includes it', async () => {
    assert.deepEqual(await who({ attr: 'plan', eq: 'pro' }), ['ann', 'cat']);
    assert.deepEqual(await who({ attr: 'plan', ne: 'pro' }), ['bob', 'dan', 'eve']);
    assert.deepEqual(await who({ attr: 'age', eq: 40 }), [], 'the string "40" is not the number 40');
    assert.deepEqual(await who({ attr: 'age', eq: '40' }), ['cat']);
    assert.deepEqual(await who({ attr: 'age', gt: 30 }), ['ann', 'dan']);
    assert.deepEqual(await who({ attr: 'age', lt: 34 }), ['bob']);
    assert.deepEqual(await who({ attr: 'city', gt: 'C' }), ['ann'], 'strings compare by code point: Z > C > B');
    assert.deepEqual(await who({ attr: 'vip', eq: true }), ['cat']);
    assert.deepEqual(await who({ attr: 'vip', eq: false }), ['dan']);
    assert.deepEqual(await who({ attr: 'plan', in: ['free', 'team'] }), ['bob']);
    assert.deepEqual(await who({ attr: 'tags', contains: 'vip' }), ['ann'], 'an array element');
    assert.deepEqual(await who({ attr: 'city', contains: 'ür' }), ['ann'], 'a part of a string');
    assert.deepEqual(await who({ attr: 'vip', exists: true }), ['cat', 'dan']);
    assert.deepEqual(await who({ attr: 'vip', exists: false }), ['ann', 'bob', 'eve']);
    assert.deepEqual(await who({ not: { attr: 'tags', contains: 'beta' } }), ['cat', 'dan', 'eve']);
  });

  test('all / any / not / list / created combine', async () => {
    assert.deepEqual(await who({ all: [{ list: 'members' }, { any: [{ attr: 'plan', eq: 'free' }, { attr: 'vip', exists: true }] }] }), ['bob', 'cat', 'dan']);
    assert.deepEqual(await who({ not: { list: 'MEMBERS' } }), ['eve']);
    assert.deepEqual(await who({ createdAfter: '2000-01-01T00:00:00Z' }), ['ann', 'bob', 'cat', 'dan', 'eve']);
    assert.deepEqual(await who({ createdBefore: '2000-01-01' }), []);
    assert.equal(await n.contacts.count({ list: 'members', segment: { attr: 'plan', eq: 'pro' } }), 2);
    assert.equal(await n.contacts.count({ segment: JSON.stringify({ attr: 'plan', eq: 'pro' }) }), 2, 'JSON text is accepted too');
  });

  test('hostile values are data: quotes, SQL, wildcards, backslashes, unicode, long strings', async () => {
    assert.deepEqual(await who({ attr: 'note', eq: "' OR 1=1 --" }), ['ann']);
    assert.deepEqual(await who({ attr: 'plan', eq: "pro' OR '1'='1" }), []);
    assert.deepEqual(await who({ attr: 'note', contains: '%' }), ['bob']);
    assert.deepEqual(await who({ attr: 'note', contains: '_' }), ['bob']);
    assert.deepEqual(await who({ attr: 'note', contains: '\\' }), ['cat']);
    await assert.rejects(who({ attr: 'plan', eq: 'a\u0000b' }), (e) => isNotifyError(e, 'INVALID_INPUT') && /NUL/.test(e.message), 'NUL is refused by name');
    assert.deepEqual(await who({ attr: 'plan', eq: '😀'.repeat(400) }), []);
    assert.deepEqual(await who({ list: "members' --" }).catch((e) => e.code), 'NOT_FOUND');
    assert.deepEqual(await who({ attr: 'plan', eq: 'x'.repeat(1000) }), []);
    assert.equal(await n.contacts.count(), 5, 'nothing was changed by any of it');
  });

  test('bad filters are INVALID_INPUT naming the path; unknown lists and campaigns are NOT_FOUND', async () => {
    let deep: unknown = { attr: 'plan', eq: 'pro' };
    for (let i = 0; i < 1000; i++) deep = { not: deep };
    const wide = { any: Array.from({ length: 201 }, () => ({ attr: 'plan', eq: 'pro' })) };
    const cases: [unknown, string, RegExp?][] = [
      [deep, 'INVALID_INPUT', /deeper than 32/],
      [wide, 'INVALID_INPUT', /at most 200/],
      [{ attr: 'plan', eq: 'pro', drop: 'table' }, 'INVALID_INPUT', /unknown key "drop"/],
      [{ all: [{ attr: 'plan', like: '%' }] }, 'INVALID_INPUT', /^segment\.all\[0\]: unknown key "like": use one of eq, ne, in, contains, gt, lt, exists$/],
      // the two messages the README quotes
      [{ all: [{ like: 'x' }] }, 'INVALID_INPUT', /^segment\.all\[0\]: unknown filter "like"$/],
      [{ attr: 'plan' }, 'INVALID_INPUT'],
      [{ attr: 'plan', eq: 'a', ne: 'b' }, 'INVALID_INPUT'],
      [{ attr: 'pl"an', eq: 'x' }, 'INVALID_INPUT', /segment\.attr/],
      [{ attr: "a') or 1=1 --", eq: 'x' }, 'INVALID_INPUT'],
      [{ attr: 'plan', eq: { $ne: 1 } }, 'INVALID_INPUT'],
      [{ attr: 'plan', eq: 'x'.repeat(1001) }, 'INVALID_INPUT'],
      [{ attr: 'plan', in: [] }, 'INVALID_INPUT'],
      [{ attr: 'age', gt: true }, 'INVALID_INPUT'],
      [{ attr: 'age', eq: Number.NaN }, 'INVALID_INPUT'],
      [{ all: [] }, 'INVALID_INPUT'],
      [{ opened: '12' }, 'INVALID_INPUT'],
      [{ opened: 1, humanOnly: 'yes' }, 'INVALID_INPUT'],
      [{ createdAfter: 'yesterday' }, 'INVALID_INPUT'],
      [{}, 'INVALID_INPUT'],
      ['{not json', 'INVALID_INPUT'],
      [[{ list: 'members' }], 'INVALID_INPUT'],
      [{ list: 'nope' }, 'NOT_FOUND'],
      [{ opened: 999999 }, 'NOT_FOUND'],
    ];
    for (const [segment, code, message] of cases) {
      await assert.rejects(
        n.contacts.count({ segment: segment as never }),
        (e) => isNotifyError(e, code as never) && (!message || message.test(e.message)),
        JSON.stringify(segment).slice(0, 80),
      );
    }
    await assert.rejects(n.campaigns.create({ subject: 's', text: 't', segment: { clicked: 424242 } }), (e) => isNotifyError(e, 'NOT_FOUND'));
  });

  test('a segment campaign reaches exactly the segment; { not: { opened, humanOnly } } re-sends to those whose only open was a prefetch', async () => {
    const first = await n.campaigns.create({ subject: 'Pro news', html: '<p>Hello</p>', list: 'members', segment: { attr: 'plan', eq: 'pro' } });
    assert.deepEqual(first.segment, { attr: 'plan', eq: 'pro' });
    assert.deepEqual(await reached(n, sink, first.id), ['ann@example.com', 'cat@example.com']);
    const sends = await n.context.store.db.selectFrom('notify_sends').select(['token', 'to_email']).where('campaign_id', '=', first.id).execute();
    const token = (email: string) => sends.find((s) => s.to_email === email)!.token;
    await call(n, `/notify/open/${token('ann@example.com')}`, { headers: { 'user-agent': BROWSER } });
    await call(n, `/notify/open/${token('cat@example.com')}`, { headers: { 'user-agent': APPLE_PREFETCH } });
    await n.flush();
    assert.deepEqual(await who({ opened: first.id }), ['ann', 'cat']);
    assert.deepEqual(await who({ opened: first.id, humanOnly: true }), ['ann']);
    const resend = await n.campaigns.create({ subject: 'In case you missed it', html: '<p>Again</p>', segment: { all: [{ attr: 'plan', eq: 'pro' }, { not: { opened: first.id, humanOnly: true } }] } });
    assert.deepEqual(await reached(n, sink, resend.id), ['cat@example.com']);
  });
});
