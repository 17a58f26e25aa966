import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { contactTimeline } from '../../src/core/timeline.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { clickPath } from '../helpers/sends.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
const START = Date.UTC(2026, 2, 1, 9, 0);
/** the rows of the timeline table: [when, what, campaign, detail] as text */
const rowsOf = (html: string) =>
  [...(/<table id="timeline"[^>]*>([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '').matchAll(/<tr class="[a-z]+">([\s\S]*?)<\/tr>/g)].map((m) =>
    [...m[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1].replace(/<[^>]+>/g, '').trim()),
  );

forEachEngine('admin: a contact and their timeline', (h) => {
  const clock = manualClock(START);
  const notify = useNotify(h, { adminToken: TOKEN, clock, mailer: 'log' });

  test('sends, opens, clicks, list and status changes, newest first, each at its own time', async () => {
    await notify().lists.create({ name: 'News' });
    await notify().lists.create({ name: 'Tips' });
    const ann = await notify().contacts.upsert({ email: 'ann@example.com', name: 'Ann <b>', lists: ['News'], attributes: { plan: '<i>pro</i>' } });
    clock.advance(minutes(1));
    const campaign = await notify().campaigns.create({ name: 'Spring <news>', subject: 'Spring', html: '<p>Hi <a href="https://example.com/a">A</a></p>', list: 'News' });
    while (!(await notify().campaigns.send(campaign.id)).done);
    const send = await notify().context.store.db.selectFrom('notify_sends').select(['token']).where('contact_id', '=', ann.id).executeTakeFirstOrThrow();
    clock.advance(minutes(1));
    // a person's browser: a user agent the classifier takes for a human
    const human = { headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36' } };
    assert.equal((await call(notify(), `/notify/open/${send.token}`, human)).status, 200);
    clock.advance(minutes(1));
    assert.equal((await call(notify(), clickPath(notify(), send.token, `c${campaign.id}`, 0), human)).status, 302);
    await notify().flush();
    clock.advance(minutes(1));
    await notify().contacts.subscribe('ann@example.com', 'Tips');
    clock.advance(minutes(1));
    await notify().contacts.unsubscribe('ann@example.com', 'News'); // an unsubscribe from that list, as the preference centre's
    clock.advance(minutes(1));
    assert.equal((await call(notify(), `/notify/unsubscribe/${ann.unsubscribe_token}`)).status, 200);

    const entries = await contactTimeline(notify().context, (await notify().contacts.get(ann.id))!);
    const brief = entries.map((e) => [(e.at.getTime() - START) / 60_000, e.kind === 'event' ? e.type : e.kind === 'status' ? `${e.list ?? 'contact'}:${e.from}>${e.to}` : e.kind]);
    assert.deepEqual(brief, [
      [6, 'unsubscribe'],
      [6, 'contact:subscribed>unsubscribed'],
      [5, 'unsubscribe'],
      [5, 'News:subscribed>unsubscribed'],
      [4, 'Tips:null>subscribed'],
      [3, 'click'],
      [2, 'open'],
      [1, 'send'],
      [0, 'News:null>subscribed'],
      [0, 'created'],
    ]);

    const res = await call(notify(), `/notify/admin/contacts/${ann.id}`, auth);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await res.text();
    assert.ok(!html.includes('<b>') && !html.includes('<i>pro') && !html.includes('<news>'), 'every stored value is escaped');
    assert.ok(html.includes('Ann &lt;b&gt;') && html.includes('&lt;i&gt;pro&lt;/i&gt;'));
    const rows = rowsOf(html);
    assert.deepEqual(
      rows.map((r) => r.slice(1, 3)),
      [
        ['Unsubscribed', ''],
        ['Status changed', ''],
        ['Unsubscribed', ''],
        ['Left list News', ''],
        ['Joined list Tips', ''],
        ['Clicked', 'Spring &lt;news&gt;'],
        ['Opened', 'Spring &lt;news&gt;'],
        ['Email sent', 'Spring &lt;news&gt;'],
        ['Joined list News', ''],
        ['Contact created', ''],
      ],
    );
    assert.equal(rows[0][0], '2026-03-01 09:06 UTC');
    assert.equal(rows[0][3], 'link');
    assert.equal(rows[1][3], 'subscribed → unsubscribed');
    assert.equal(rows[2][3], 'api');
    assert.equal(rows[5][3], 'link 1');
    assert.equal(rows[9][3], 'status subscribed');
    assert.match(html, new RegExp(`<a href="/notify/admin/campaigns/${campaign.id}">Spring &lt;news&gt;</a>`));
  });

  test('status changes by upsert are recorded in order; a contact created pending starts the timeline pending', async () => {
    const bob = await notify().contacts.upsert({ email: 'bob@example.com', status: 'pending' });
    clock.advance(minutes(1));
    await notify().contacts.upsert({ email: 'bob@example.com', status: 'subscribed' });
    clock.advance(minutes(1));
    await notify().contacts.upsert({ email: 'bob@example.com', status: 'bounced' });
    const entries = await contactTimeline(notify().context, (await notify().contacts.get(bob.id))!);
    assert.deepEqual(
      entries.map((e) => (e.kind === 'status' ? `${e.from}>${e.to}` : e.kind === 'created' ? `created ${e.status}` : e.kind === 'event' ? `${e.type} (${e.source})` : e.kind)),
      // a bounced status by upsert is the suppression flow: its bounce event comes with the change
      ['bounce (api)', 'subscribed>bounced', 'pending>subscribed', 'created pending'],
    );
  });

  test('erasing the person removes their status history', async () => {
    const cy = await notify().contacts.upsert({ email: 'cy@example.com', lists: ['News'] });
    await notify().contacts.unsubscribe('cy@example.com');
    const db = notify().context.store.db;
    const count = async () => Number((await db.selectFrom('notify_status_changes').select((eb) => eb.fn.countAll<number>().as('n')).where('contact_id', '=', cy.id).executeTakeFirstOrThrow()).n);
    assert.equal(await count(), 2);
    await notify().contacts.erase('cy@example.com');
    assert.equal(await count(), 0);
  });

  test('bad ids are a 404 page, never a 500; the page needs the token', async () => {
    for (const id of ['0', '999999', 'abc', '1e3', '-1', '%27%20OR%201=1', '9'.repeat(40)]) {
      const res = await call(notify(), `/notify/admin/contacts/${id}`, auth);
      assert.equal(res.status, 404, id);
    }
    assert.equal((await call(notify(), '/notify/admin/contacts/1')).status, 401);
  });
});
