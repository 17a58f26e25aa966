import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { newToken } from '../../src/core/tokens.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { parseJson } from '../../src/store/rows.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { reached } from './helpers.ts';

/** Everything the preference centre could change, to show a GET changed none of it. */
async function snapshot(n: Notify) {
  const db = n.context.store.db;
  return {
    contacts: await db.selectFrom('notify_contacts').select(['id', 'status', 'updated_at']).orderBy('id').execute(),
    members: await db.selectFrom('notify_list_members').selectAll().orderBy('list_id').orderBy('contact_id').execute(),
    events: await db.selectFrom('notify_events').select('id').execute(),
  };
}

/** the ticked state of each list on the page, by list name */
function boxes(html: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const m of html.matchAll(/<input type="checkbox" name="list" value="(\d+)"( checked)?> ([^<]*)<\/label>/g)) out[m[3]] = !!m[2];
  return out;
}

const post = (n: Notify, token: string, form: [string, string][]) =>
  call(n, `/notify/preferences/${token}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });

forEachEngine('preference centre', (h) => {
  const notify = useNotify(h);
  const ids: Record<string, number> = {};
  const fired: { email: string; list?: string; source: string }[] = [];
  before(async () => {
    for (const [name, pub, description] of [
      ['News', true, 'Monthly <b>news</b> & "offers"'],
      ['Tips', false, ''],
      ['Events', true, ''],
      ['Staff', false, ''],
    ] as const) {
      ids[name] = (await notify().lists.create({ name, public: pub, description: description || undefined })).id;
    }
    notify().on('notify:contact.unsubscribed', (p) => {
      fired.push({ email: p.contact.email, list: p.list, source: p.source });
    });
  });

  test("GET shows the person's lists and the public ones, escaped, with the page headers, and changes nothing", async () => {
    const ann = await notify().contacts.upsert({ email: 'ann@example.com', lists: ['News', 'Tips'] });
    await notify().contacts.unsubscribe(ann.id, 'Tips');
    const before = await snapshot(notify());
    const res = await call(notify(), `/notify/preferences/${ann.unsubscribe_token}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'.*form-action 'self'/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('x-robots-tag'), 'noindex, nofollow');
    const html = await res.text();
    assert.deepEqual(boxes(html), { Events: false, News: true, Tips: false }, 'Staff (private, never joined) is not shown');
    assert.ok(html.includes('Monthly &lt;b&gt;news&lt;/b&gt; &amp; &#34;offers&#34;'), 'descriptions are escaped');
    assert.ok(html.includes('a**@example.com'), 'the address is masked');
    assert.match(html, new RegExp(`<form method="post" action="/notify/preferences/${ann.unsubscribe_token}">`));
    const head = await call(notify(), `/notify/preferences/${ann.unsubscribe_token}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.deepEqual(await snapshot(notify()), before, 'GET and HEAD changed nothing');
  });

  test('POST applies the choices: leaves what is unticked, joins what is ticked; other lists stay untouched', async () => {
    const bob = await notify().contacts.upsert({ email: 'bob@example.com', lists: ['News', 'Tips', 'Staff'] });
    const res = await post(notify(), bob.unsubscribe_token, [
      ['list', String(ids.Tips)],
      ['list', String(ids.Events)],
      ['notify_action', 'save'],
    ]);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /Your choices are saved/);
    assert.deepEqual(boxes(html), { Events: true, News: false, Staff: false, Tips: true });
    const after = (await notify().contacts.get(bob.id))!;
    assert.equal(after.status, 'subscribed');
    assert.deepEqual(after.lists, ['Events', 'Tips']);
    assert.deepEqual(
      fired.filter((f) => f.email === 'bob@example.com'),
      [
        { email: 'bob@example.com', list: 'News', source: 'preferences' },
        { email: 'bob@example.com', list: 'Staff', source: 'preferences' },
      ],
    );
    const events = await notify().context.store.db.selectFrom('notify_events').select(['type', 'metadata']).where('contact_id', '=', bob.id).execute();
    assert.deepEqual(events.map((e) => [e.type, parseJson(e.metadata).list]).sort(), [
      ['unsubscribe', 'News'],
      ['unsubscribe', 'Staff'],
    ]);
  });

  test('POST unsubscribe_all unsubscribes from everything, as the unsubscribe link does', async () => {
    const cy = await notify().contacts.upsert({ email: 'cy@example.com', lists: ['News'] });
    const res = await post(notify(), cy.unsubscribe_token, [
      ['list', String(ids.News)],
      ['notify_action', 'unsubscribe_all'],
    ]);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /unsubscribed from all our emails/);
    assert.equal((await notify().contacts.get(cy.id))!.status, 'unsubscribed');
    assert.deepEqual(fired.at(-1), { email: 'cy@example.com', list: undefined, source: 'preferences' });
    const again = await post(notify(), cy.unsubscribe_token, [['notify_action', 'unsubscribe_all']]);
    assert.equal(again.status, 200);
    assert.equal(fired.filter((f) => f.email === 'cy@example.com').length, 1, 'a second time fires nothing');
  });

  test('ticking a list is an opt-in for an unsubscribed contact, never for a bounced one', async () => {
    const dee = await notify().contacts.upsert({ email: 'dee@example.com', lists: ['News'] });
    await notify().contacts.unsubscribe(dee.id);
    await post(notify(), dee.unsubscribe_token, [['list', String(ids.News)]]);
    assert.equal((await notify().contacts.get(dee.id))!.status, 'subscribed');

    const eve = await notify().contacts.upsert({ email: 'eve@example.com', lists: ['News'], status: 'bounced' });
    const res = await post(notify(), eve.unsubscribe_token, [['list', String(ids.News)]]);
    assert.match(await res.text(), /no longer send emails to this address/);
    assert.equal((await notify().contacts.get(eve.id))!.status, 'bounced');
  });

  test('bad input: tokens are 404 (410 once erased) and change nothing; list values that are not shown lists are ignored', async () => {
    const fay = await notify().contacts.upsert({ email: 'fay@example.com', lists: ['News'] });
    const before = await snapshot(notify());
    for (const path of [`/notify/preferences/${newToken()}`, '/notify/preferences/short', "/notify/preferences/' OR 1=1 --", '/notify/preferences/%00', `/notify/preferences/${fay.unsubscribe_token}/x`, '/notify/preferences/']) {
      for (const method of ['GET', 'POST']) {
        const res = await call(notify(), path, { method, body: method === 'POST' ? `list=${ids.Staff}&notify_action=unsubscribe_all` : undefined });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.match(await res.text(), /not valid/);
      }
    }
    assert.deepEqual(await snapshot(notify()), before, 'bad tokens changed nothing');

    const hostile = await post(notify(), fay.unsubscribe_token, [
      ['list', String(ids.News)],
      ['list', String(ids.Staff)],
      ['list', `${ids.Tips} OR 1=1`],
      ['list', '-1'],
      ['list', '1e3'],
      ['list', '9'.repeat(40)],
      ['notify_action', "'; drop table notify_contacts; --"],
    ]);
    assert.equal(hostile.status, 200);
    assert.deepEqual((await notify().contacts.get(fay.id))!.lists, ['News'], 'Staff is private and was not shown: not joined');

    const huge = await call(notify(), `/notify/preferences/${fay.unsubscribe_token}`, { method: 'POST', body: `list=${'1'.repeat(70_000)}` });
    assert.equal(huge.status, 413);

    await notify().contacts.erase(fay.id);
    assert.equal((await call(notify(), `/notify/preferences/${fay.unsubscribe_token}`)).status, 410);
    assert.equal((await post(notify(), fay.unsubscribe_token, [])).status, 410);
  });
});

forEachEngine('preference centre: view override and {notify_preferences_url}', (h) => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-views-'));
  mkdirSync(join(dir, 'notify'), { recursive: true });
  writeFileSync(join(dir, 'notify/preferences.liquid'), '<p>MINE {{ email }}{% for l in lists %} [{{ l.name }}={{ l.subscribed }}]{% endfor %}</p>');
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, viewsPath: dir, baseUrl: 'https://shop.example' }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('an application view named preferences replaces the shipped one', async () => {
    const ann = await notify.contacts.upsert({ email: 'ann@example.com', lists: ['News'] });
    const res = await call(notify, `/notify/preferences/${ann.unsubscribe_token}`);
    assert.equal(await res.text(), '<p>MINE a**@example.com [News=true]</p>');
  });

  test('the placeholder becomes the recipient’s preference centre URL in both parts, never click-tracked', async () => {
    await notify.contacts.upsert({ email: 'bob@example.com', lists: ['News'] });
    const html = await notify.campaigns.create({ subject: 'Hi', list: 'News', html: '<p><a href="{notify_preferences_url}">Preferences</a> <a href="https://shop.example/x">x</a></p>' });
    const md = await notify.campaigns.create({ subject: 'Hi md', list: 'News', markdown: 'Choose [what you get]({notify_preferences_url}).' });
    for (const c of [html, md]) {
      const start = sink.messages.length;
      await reached(notify, sink, c.id);
      for (const m of sink.messages.slice(start)) {
        const contact = (await notify.contacts.get(m.envelope.to[0]))!;
        const url = `https://shop.example/notify/preferences/${contact.unsubscribe_token}`;
        assert.ok(String(m.parsed.html).includes(`href="${url}"`), `html of ${c.subject} to ${contact.email}: ${m.parsed.html}`);
        assert.ok(String(m.parsed.text).includes(url), `text of ${c.subject}`);
        assert.ok(!String(m.parsed.html).includes('{notify_preferences_url}'));
      }
    }
  });
});
