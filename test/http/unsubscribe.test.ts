import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { newToken } from '../../src/core/tokens.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';

async function enroll(notify: Notify, contactId: number, status = 'active'): Promise<number> {
  const db = notify.context.store.db;
  const seq = await db.insertInto('notify_sequences').values({ name: `seq-${newToken()}`, created_at: 1 }).returning('id').executeTakeFirstOrThrow();
  const row = await db
    .insertInto('notify_enrollments')
    .values({ sequence_id: Number(seq.id), contact_id: contactId, status, step_index: 0, attempts: 0, next_send_at: 1, created_at: 1, updated_at: 1 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

async function enrollmentStatus(notify: Notify, id: number): Promise<string> {
  return (await notify.context.store.db.selectFrom('notify_enrollments').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
}

async function unsubscribeEvents(notify: Notify, contactId: number) {
  return notify.context.store.db.selectFrom('notify_events').selectAll().where('contact_id', '=', contactId).where('type', '=', 'unsubscribe').execute();
}

function assertPageHeaders(res: Response): void {
  assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  assert.equal(res.headers.get('location'), null);
  assert.equal(res.headers.get('set-cookie'), null);
}

function listen(notify: Notify) {
  const fired: { email: string; source: string; sendId: number | null | undefined }[] = [];
  const off = notify.on('notify:contact.unsubscribed', (p) => {
    fired.push({ email: p.contact.email, source: p.source, sendId: p.sendId });
  });
  return { fired, off };
}

forEachEngine('/notify/unsubscribe', (h) => {
  const notify = useNotify(h);

  test('GET unsubscribes, cancels active enrollments, writes an event, fires the app event once, is idempotent', async () => {
    const contact = await notify().contacts.upsert({ email: 'ann@example.com' });
    const active = await enroll(notify(), contact.id);
    const done = await enroll(notify(), contact.id, 'completed');
    const { fired, off } = listen(notify());
    try {
      const res = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`);
      assert.equal(res.status, 200);
      assertPageHeaders(res);
      assert.match(await res.text(), /You are unsubscribed[\s\S]*a\*\*@example\.com will not receive/);
      assert.equal((await notify().contacts.get(contact.id))?.status, 'unsubscribed');
      assert.equal(await enrollmentStatus(notify(), active), 'cancelled');
      assert.equal(await enrollmentStatus(notify(), done), 'completed');
      const again = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`);
      assert.equal(again.status, 200);
      assert.match(await again.text(), /already unsubscribed/);
      assert.equal((await unsubscribeEvents(notify(), contact.id)).length, 1);
      assert.deepEqual(fired, [{ email: 'ann@example.com', source: 'link', sendId: null }]);
    } finally {
      off();
    }
  });

  test('POST one-click: urlencoded, multipart and empty bodies, no cookie or CSRF token, 200 without redirect', async () => {
    const multipart = new FormData();
    multipart.set('List-Unsubscribe', 'One-Click');
    const bodies: [string, RequestInit][] = [
      ['urlencoded', { body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['multipart', { body: multipart }],
      ['empty', {}],
      ['garbage', { body: '\u0000{not json', headers: { 'content-type': 'application/json' } }],
    ];
    for (const [what, init] of bodies) {
      const contact = await notify().contacts.upsert({ email: `${what}@example.com` });
      const { fired, off } = listen(notify());
      const res = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'POST', redirect: 'manual', ...init });
      off();
      assert.equal(res.status, 200, what);
      assertPageHeaders(res);
      assert.equal((await notify().contacts.get(contact.id))?.status, 'unsubscribed', what);
      assert.deepEqual(fired.map((f) => f.source), ['one-click'], what);
      const twice = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'POST', ...init });
      assert.equal(twice.status, 200, what);
      const rows = await unsubscribeEvents(notify(), contact.id);
      assert.deepEqual(
        rows.map((r) => (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata)),
        [{ source: 'one-click' }],
        `${what}: the event row says how`,
      );
    }
  });

  test('concurrent one-click POSTs (providers retry) run the flow once', async () => {
    const contact = await notify().contacts.upsert({ email: 'race@example.com' });
    const { fired, off } = listen(notify());
    const results = await Promise.all(Array.from({ length: 8 }, () => call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'POST' })));
    off();
    assert.deepEqual(
      results.map((r) => r.status),
      Array(8).fill(200),
    );
    assert.equal(fired.length, 1);
    assert.equal((await unsubscribeEvents(notify(), contact.id)).length, 1);
  });

  test('a bounced or complained contact becomes unsubscribed too (any state)', async () => {
    const contact = await notify().contacts.upsert({ email: 'bounced@example.com', status: 'bounced' });
    const res = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal((await notify().contacts.get(contact.id))?.status, 'unsubscribed');
  });

  test('unknown and malformed tokens render unsubscribe_invalid with 404 and touch nobody', async () => {
    const bystander = await notify().contacts.upsert({ email: 'bystander@example.com' });
    for (const token of [newToken(), 'short', 'a'.repeat(23), `${bystander.unsubscribe_token.slice(0, 21)}%00`, '%3Cscript%3Ealert(1)%3C%2Fscript%3E', "x'%20or%20'1'='1"]) {
      for (const method of ['GET', 'POST']) {
        const res = await call(notify(), `/notify/unsubscribe/${token}`, { method });
        assert.equal(res.status, 404, `${method} ${token}`);
        assertPageHeaders(res);
        const html = await res.text();
        assert.match(html, /not valid/);
        assert.doesNotMatch(html, /<script>/);
      }
    }
    for (const path of ['/notify/unsubscribe/', `/notify/unsubscribe/${bystander.unsubscribe_token}/x`, `/notify/unsubscribe/x/${bystander.unsubscribe_token}`]) {
      for (const method of ['GET', 'POST', 'HEAD']) assert.equal((await call(notify(), path, { method })).status, 404, `${method} ${path}`);
    }
    assert.equal((await notify().contacts.get(bystander.id))?.status, 'subscribed');
  });

  test("an erased contact's token renders unsubscribe_expired with 410", async () => {
    const contact = await notify().contacts.upsert({ email: 'gone@example.com' });
    assert.equal(await notify().contacts.erase(contact.id), true);
    for (const method of ['GET', 'POST']) {
      const res = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method });
      assert.equal(res.status, 410);
      assertPageHeaders(res);
      assert.match(await res.text(), /has expired/);
    }
    assert.equal((await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'HEAD' })).status, 410);
  });

  test('HEAD never acts; it answers the status GET would', async () => {
    const contact = await notify().contacts.upsert({ email: 'head@example.com' });
    const enrollment = await enroll(notify(), contact.id);
    const res = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal((await res.arrayBuffer()).byteLength, 0);
    assert.equal((await notify().contacts.get(contact.id))?.status, 'subscribed');
    assert.equal(await enrollmentStatus(notify(), enrollment), 'active');
    assert.equal((await call(notify(), `/notify/unsubscribe/${newToken()}`, { method: 'HEAD' })).status, 404);
  });

  test('?s=<send token> attributes the unsubscribe to that send and campaign, only for its own contact', async () => {
    const store = notify().context.store;
    const campaignId = await insertCampaign(store);
    const send = await insertSend(notify(), { campaignId });
    const stranger = await insertSend(notify(), { campaignId });
    const { fired, off } = listen(notify());
    // another contact's send token is ignored
    const other = await notify().contacts.upsert({ email: 'other@example.com' });
    await call(notify(), `/notify/unsubscribe/${other.unsubscribe_token}?s=${send.token}`, { method: 'POST' });
    await call(notify(), `/notify/unsubscribe/${send.unsubscribeToken}?s=${send.token}`, { method: 'POST' });
    await call(notify(), `/notify/unsubscribe/${stranger.unsubscribeToken}?s=not-a-token`);
    off();
    assert.deepEqual(
      fired.map((f) => f.sendId),
      [null, send.id, null],
    );
    const [event] = await unsubscribeEvents(notify(), send.contactId);
    assert.deepEqual([Number(event.send_id), Number(event.campaign_id)], [send.id, campaignId]);
    assert.equal((await store.counters.get(campaignId)).unsubscribed, 1);
  });

  test('a write failing mid-flow leaves nothing half done: still subscribed, enrollment active, no event; the retry completes it', async () => {
    const store = notify().context.store;
    const campaignId = await insertCampaign(store);
    const send = await insertSend(notify(), { campaignId });
    const enrollment = await enroll(notify(), send.contactId);
    const { fired, off } = listen(notify());
    // The event insert fails, as a lost connection or a full disk would, after the status change.
    if (h.engine === 'sqlite') await sql`CREATE TRIGGER fail_events BEFORE INSERT ON notify_events BEGIN SELECT RAISE(ABORT, 'disk full'); END`.execute(store.db);
    else {
      await sql`CREATE FUNCTION fail_events() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$ LANGUAGE plpgsql`.execute(store.db);
      await sql`CREATE TRIGGER fail_events BEFORE INSERT ON notify_events FOR EACH ROW EXECUTE FUNCTION fail_events()`.execute(store.db);
    }
    try {
      const res = await call(notify(), `/notify/unsubscribe/${send.unsubscribeToken}?s=${send.token}`, { method: 'POST' });
      assert.equal(res.status, 500);
      assert.equal((await notify().contacts.get(send.contactId))?.status, 'subscribed');
      assert.equal(await enrollmentStatus(notify(), enrollment), 'active');
      assert.equal((await store.counters.get(campaignId)).unsubscribed, 0);
      assert.deepEqual(fired, []);
    } finally {
      await sql`DROP TRIGGER fail_events${sql.raw(h.engine === 'postgres' ? ' ON notify_events' : '')}`.execute(store.db);
    }
    const retry = await call(notify(), `/notify/unsubscribe/${send.unsubscribeToken}?s=${send.token}`, { method: 'POST' });
    off();
    assert.equal(retry.status, 200);
    assert.equal((await notify().contacts.get(send.contactId))?.status, 'unsubscribed');
    assert.equal(await enrollmentStatus(notify(), enrollment), 'cancelled');
    assert.equal((await unsubscribeEvents(notify(), send.contactId)).length, 1);
    assert.equal((await store.counters.get(campaignId)).unsubscribed, 1);
    assert.equal(fired.length, 1);
  });
});

forEachEngine('/notify/unsubscribe with unsubscribeConfirm', (h) => {
  const notify = useNotify(h, { unsubscribeConfirm: true });

  test('GET shows a confirm page with a POST button and changes nothing; the POST acts (source link; a one-click POST is one-click)', async () => {
    const { fired, off } = listen(notify());
    const contact = await notify().contacts.upsert({ email: 'confirm@example.com' });
    const send = await insertSend(notify(), { email: 'confirm@example.com' });
    const page = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}?s=${send.token}`);
    assert.equal(page.status, 200);
    assertPageHeaders(page);
    const html = await page.text();
    const action = `/notify/unsubscribe/${contact.unsubscribe_token}?s=${send.token}`;
    assert.ok(html.includes(`<form method="post" action="${action}">`), html);
    assert.match(html, /name="notify_confirm" value="1"/);
    assert.equal((await notify().contacts.get(contact.id))?.status, 'subscribed');
    const post = await call(notify(), action, { method: 'POST', body: new URLSearchParams({ notify_confirm: '1' }) });
    assert.equal(post.status, 200);
    assert.equal((await notify().contacts.get(contact.id))?.status, 'unsubscribed');
    assert.equal((await call(notify(), `/notify/unsubscribe/${newToken()}`)).status, 404);
    const other = await notify().contacts.upsert({ email: 'client@example.com' });
    await call(notify(), `/notify/unsubscribe/${other.unsubscribe_token}`, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });
    off();
    assert.deepEqual(
      fired.map((f) => [f.email, f.source]),
      [
        ['confirm@example.com', 'link'],
        ['client@example.com', 'one-click'],
      ],
    );
  });
  test('the confirm page shows the address masked: its first letter, 2 to 8 stars, the domain', async () => {
    const cases: [string, string][] = [
      ['a@example.com', 'a**@example.com'],
      ['bo@example.com', 'b**@example.com'],
      ['carol@example.com', 'c****@example.com'],
      ['averyveryverylongname@example.com', 'a********@example.com'],
    ];
    for (const [email, shown] of cases) {
      const contact = await notify().contacts.upsert({ email });
      const html = await (await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`)).text();
      assert.ok(html.includes(`<h1>Unsubscribe ${shown}?</h1>`), `${email}: ${html}`);
      assert.ok(!html.includes(email), `${email} itself is not on the page`);
    }
  });
});

forEachEngine('unsubscribe view overrides', (h) => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-views-'));
  mkdirSync(join(dir, 'notify'), { recursive: true });
  writeFileSync(join(dir, 'notify/unsubscribe_success.liquid'), '<p>MINE: {{ email }} {{ base_url }}</p>');
  writeFileSync(join(dir, 'notify/unsubscribe_invalid.liquid'), '{% layout "notify/layouts/page" %}{% block content %}<p>MY INVALID</p>{% endblock %}');
  writeFileSync(join(dir, 'notify/unsubscribe_expired.liquid'), '{{ nope | no_such_filter }}');
  const notify = useNotify(h, { viewsPath: dir, baseUrl: "https://shop.example/?a=1&b='2'" });

  test('application views under viewsPath win, output is escaped, a broken override still answers', async () => {
    const contact = await notify().contacts.upsert({ email: "o'brien&co@example.com" });
    const ok = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`);
    assert.equal(ok.status, 200);
    assertPageHeaders(ok);
    assert.equal(await ok.text(), '<p>MINE: o********@example.com https://shop.example/?a=1&amp;b=&#39;2&#39;</p>');
    const invalid = await call(notify(), `/notify/unsubscribe/${newToken()}`);
    assert.equal(invalid.status, 404);
    assert.match(await invalid.text(), /<main>\s*<p>MY INVALID<\/p>/);
    await notify().contacts.erase(contact.id);
    const expired = await call(notify(), `/notify/unsubscribe/${contact.unsubscribe_token}`);
    assert.equal(expired.status, 410, 'the status survives a broken override');
    assertPageHeaders(expired);
  });
});
