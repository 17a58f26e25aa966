import assert from 'node:assert/strict';
import { mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { manualClock } from '../../src/core/clock.ts';
import { presentedToken, tokenMatches } from '../../src/http/admin/auth.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const T0 = Date.UTC(2026, 0, 1, 9, 0);
const bearer = { headers: { authorization: `Bearer ${TOKEN}` } };
const basic = (user: string, pass: string) => ({ headers: { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` } });

async function eml(dir: string, name: string, opts: ConstructorParameters<typeof MailComposer>[0], mtime: number) {
  const raw = await new MailComposer(opts).compile().build();
  writeFileSync(join(dir, name), raw);
  utimesSync(join(dir, name), mtime / 1000, mtime / 1000);
}

test('token parsing: bearer, basic password with any user, nothing else', () => {
  assert.equal(presentedToken(`Bearer ${TOKEN}`), TOKEN);
  assert.equal(presentedToken(`bearer ${TOKEN}`), TOKEN);
  assert.equal(presentedToken(basic('admin', TOKEN).headers.authorization), TOKEN);
  assert.equal(presentedToken(basic('', 'a:b').headers.authorization), 'a:b', 'only the first colon separates the user');
  for (const bad of [undefined, '', 'Bearer', 'Bearer ', `Token ${TOKEN}`, `Bearer ${TOKEN} extra`, 'Basic !!!', `Basic ${Buffer.from(TOKEN).toString('base64')}`, `Bearer ${'x'.repeat(5000)}`]) {
    assert.equal(presentedToken(bad), undefined, String(bad));
  }
  assert.equal(tokenMatches(TOKEN, TOKEN), true);
  assert.equal(tokenMatches(`${TOKEN}x`, TOKEN), false);
  assert.equal(tokenMatches(TOKEN.slice(0, -1), TOKEN), false);
  assert.equal(tokenMatches('', ''), false, 'an empty token never matches');
});

describe('admin pages are off without adminToken', () => {
  let notify: Notify;
  const dir = mkdtempSync(join(tmpdir(), 'notify-admin-off-'));
  after(() => notify?.close());
  test('every admin path is a 404, with or without credentials', async () => {
    notify = await createNotify(testOptions(`sqlite:${join(dir, 'n.db')}`));
    for (const path of ['/notify/admin', '/notify/admin/', '/notify/admin/outbox', '/notify/admin/campaigns/1']) {
      assert.equal((await call(notify, path)).status, 404, path);
      assert.equal((await call(notify, path, bearer)).status, 404, path);
    }
  });
});

forEachEngine('admin pages', (h) => {
  const outbox = mkdtempSync(join(tmpdir(), 'notify-admin-outbox-'));
  const notify = useNotify(h, { adminToken: TOKEN, mailer: `outbox:${outbox}`, clock: manualClock(T0) });

  test('refused without the token or with a wrong one: 401 with a Basic challenge', async () => {
    const paths = ['/notify/admin', '/notify/admin/', '/notify/admin/outbox', '/notify/admin/campaigns/1', '/notify/admin/campaigns/1/report.json', '/notify/admin/outbox/a.eml/raw', '/notify/admin/nope'];
    const wrong = [
      undefined,
      { headers: { authorization: 'Bearer wrong' } },
      { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` } },
      { headers: { authorization: `Bearer ${TOKEN}0` } },
      { headers: { authorization: TOKEN } },
      basic(TOKEN, ''),
      basic('admin', 'wrong'),
      { headers: { authorization: 'Basic %%%' } },
    ];
    for (const path of paths) {
      for (const init of wrong) {
        const res = await call(notify(), path, init);
        assert.equal(res.status, 401, `${path} ${JSON.stringify(init)}`);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Basic realm="notify admin"/);
        assert.doesNotMatch(await res.text(), /Campaigns|outbox/i);
      }
    }
    assert.equal((await call(notify(), '/notify/admin', { method: 'POST' })).status, 401);
    assert.equal((await call(notify(), `/notify/admin?token=${TOKEN}`)).status, 401, 'never from the query string');
  });

  test('bearer and basic auth both open the dashboard, with secure page headers', async () => {
    for (const init of [bearer, basic('admin', TOKEN), basic('', TOKEN)]) {
      const res = await call(notify(), '/notify/admin', init);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'.*frame-ancestors 'none'/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      assert.match(await res.text(), /<h1>Campaigns<\/h1>/);
    }
  });

  test('dashboard lists campaigns with stats and sequences with enrollments by status, all escaped', async () => {
    const db = notify().context.store.db;
    const camp = await db.insertInto('notify_campaigns').values({ name: '<script>alert(1)</script>', subject: 'S', status: 'sent', created_at: T0 }).returning('id').executeTakeFirstOrThrow();
    const id = Number(camp.id);
    await notify().context.store.counters.add(new Map([[id, { total: 7, sent: 6, failed: 1, opened: 4, human_opened: 1, clicked: 2, human_clicked: 2, unsubscribed: 1 }]]));
    const seq = await db.insertInto('notify_sequences').values({ name: 'Welcome "<b>"', created_at: T0 }).returning('id').executeTakeFirstOrThrow();
    const c = await notify().contacts.upsert({ email: 'seq@example.com' });
    await db.insertInto('notify_enrollments').values({ sequence_id: Number(seq.id), contact_id: c.id, status: 'active', step_index: 0, attempts: 0, created_at: T0, updated_at: T0 }).execute();
    const html = await (await call(notify(), '/notify/admin', bearer)).text();
    assert.doesNotMatch(html, /<script>alert/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, new RegExp(`href="/notify/admin/campaigns/${id}"`));
    const row = html.slice(html.indexOf(`<td>${id}</td>`));
    assert.match(row, /<td class="n">7<\/td><td class="n">6<\/td><td class="n">1<\/td>/);
    assert.match(html, /Welcome &#34;&lt;b&gt;&#34;/);
    assert.match(html, /id="sequences"/);
  });

  test('campaign page: figures raw and human, an SVG chart, links and machine reasons; JSON report', async () => {
    const db = notify().context.store.db;
    const camp = await db.insertInto('notify_campaigns').values({ name: 'Spring', subject: 'Spring sale', status: 'sent', created_at: T0, sent_at: T0 }).returning('id').executeTakeFirstOrThrow();
    const id = Number(camp.id);
    await notify().context.store.counters.add(new Map([[id, { total: 3, sent: 3, opened: 2, human_opened: 1, clicked: 1, human_clicked: 1 }]]));
    await notify().context.store.links.ensureScope(`c${id}`, ['https://shop.example/spring?a=1&b=<2>', 'javascript:alert(1)'], T0);
    const ev = (type: string, at: number, extra = {}) => ({ type, send_id: null, contact_id: null, campaign_id: id, link_index: null, is_machine: 0, machine_reason: null, created_at: at, ...extra });
    await notify().context.store.events.insertMany([
      ev('open', T0 + 1000, { is_machine: 1, machine_reason: 'apple-mpp' }),
      ev('open', T0 + 600_000),
      ev('click', T0 + 660_000, { link_index: 0 }),
      ev('click', T0 + 660_000, { link_index: 1 }),
    ]);
    const res = await call(notify(), `/notify/admin/campaigns/${id}`, bearer);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<svg [^>]*role="img"/);
    // opens, human opens, clicks, human clicks: once drawn wide, once at a phone's width
    assert.equal((html.match(/<polyline /g) ?? []).length, 8, 'four series in each of the two drawings');
    assert.match(html, /<div class="chart-narrow"><svg [^>]*viewBox="0 0 360 300"/);
    assert.match(html, /id="stat-opened">2</);
    assert.match(html, /id="stat-human-opened">1</);
    assert.match(html, /id="stat-clicked">1</);
    assert.match(html, /<td>open<\/td><td>apple-mpp<\/td><td class="n">1<\/td>/);
    assert.match(html, /href="https:\/\/shop.example\/spring\?a=1&amp;b=&lt;2&gt;"/);
    assert.doesNotMatch(html, /href="javascript:/, 'non-http destinations are never links');
    assert.match(html, /javascript:alert\(1\)/);
    const hourly = await (await call(notify(), `/notify/admin/campaigns/${id}?bucket=1h`, bearer)).text();
    assert.match(hourly, /Events per 1h/);
    const odd = await call(notify(), `/notify/admin/campaigns/${id}?bucket=<x>`, bearer);
    assert.equal(odd.status, 200, 'an unknown bucket falls back to automatic');
    const json = await (await call(notify(), `/notify/admin/campaigns/${id}/report.json`, bearer)).json();
    assert.deepEqual(json.stats, { total: 3, sent: 3, failed: 0, opened: 2, clicked: 1 });
    assert.equal(json.links.length, 2);
  });

  test('unknown or malformed campaign ids are 404 pages', async () => {
    for (const id of ['999999', '0', '-1', 'abc', '1.5', '%3Cscript%3E', '99999999999999999999']) {
      const res = await call(notify(), `/notify/admin/campaigns/${id}`, bearer);
      assert.equal(res.status, 404, id);
      assert.doesNotMatch(await res.text(), /<script>/);
      assert.equal((await call(notify(), `/notify/admin/campaigns/${id}/report.json`, bearer)).status, 404, id);
    }
  });

  test('outbox lists .eml files newest first and shows a message, escaped, its HTML sandboxed', async () => {
    await eml(outbox, '0001-old.eml', { from: 'news@example.com', to: 'ann@example.com', subject: 'Older', text: 'old' }, T0);
    await eml(
      outbox,
      '0002-new.eml',
      {
        from: '"News" <news@example.com>',
        to: 'bob@example.com',
        subject: 'Hi <img src=x onerror=alert(1)> ✓',
        html: '<html><head><title>t</title></head><body><p>Hello</p><a href="http://localhost:3000/notify/click/abc?l=c1.0.x">Go</a><script>alert(1)</script></body></html>',
        text: 'Hello <b>text</b>',
        headers: { 'List-Unsubscribe': '<http://localhost:3000/notify/unsubscribe/tok>' },
      },
      T0 + 60_000,
    );
    writeFileSync(join(outbox, 'notes.txt'), 'not a message');
    symlinkSync('/etc/passwd', join(outbox, 'link.eml'));
    const list = await (await call(notify(), '/notify/admin/outbox', bearer)).text();
    assert.match(list, /2 messages/);
    assert.ok(list.indexOf('0002-new.eml') < list.indexOf('0001-old.eml'), 'newest first');
    assert.match(list, /Hi &lt;img src=x onerror=alert\(1\)&gt; ✓/);
    assert.doesNotMatch(list, /notes\.txt|link\.eml/);

    const page = await call(notify(), '/notify/admin/outbox/0002-new.eml', bearer);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-src 'self'/);
    const html = await page.text();
    assert.match(html, /<iframe [^>]*src="\/notify\/admin\/outbox\/0002-new.eml\/html" sandbox="allow-popups/);
    assert.match(html, /Hello &lt;b&gt;text&lt;\/b&gt;/);
    assert.match(html, /List-Unsubscribe<\/th><td class="wrap">&lt;http:\/\/localhost:3000\/notify\/unsubscribe\/tok&gt;/);
    assert.doesNotMatch(html, /<script>alert/);

    const body = await call(notify(), '/notify/admin/outbox/0002-new.eml/html', bearer);
    assert.match(body.headers.get('content-security-policy') ?? '', /^sandbox allow-popups.*default-src 'none'.*frame-ancestors 'self'/);
    assert.doesNotMatch(body.headers.get('content-security-policy') ?? '', /allow-scripts|allow-same-origin|script-src/);
    assert.match(await body.text(), /<head><base target="_top"><title>/);

    const raw = await call(notify(), '/notify/admin/outbox/0001-old.eml/raw', bearer);
    assert.equal(raw.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.match(await raw.text(), /Subject: Older/);
  });

  test('outbox refuses names outside the folder, symlinks and other files', async () => {
    for (const name of ['link.eml', 'notes.txt', '..%2Fnotify.db', '..%2F..%2Fetc%2Fpasswd', '.hidden.eml', 'missing.eml', '%2Fetc%2Fpasswd', 'a%00.eml']) {
      for (const suffix of ['', '/html', '/raw']) {
        const res = await call(notify(), `/notify/admin/outbox/${name}${suffix}`, bearer);
        assert.equal(res.status, 404, name + suffix);
        assert.doesNotMatch(await res.text(), /root:/);
      }
    }
  });
});

describe('outbox page with another mailer', () => {
  let notify: Notify;
  const dir = mkdtempSync(join(tmpdir(), 'notify-admin-smtp-'));
  after(() => notify?.close());
  test('explains itself and never shows the SMTP password', async () => {
    notify = await createNotify(testOptions(`sqlite:${join(dir, 'n.db')}`, { adminToken: TOKEN, mailer: 'smtp://user:secret@127.0.0.1:2525' }));
    const html = await (await call(notify, '/notify/admin/outbox', bearer)).text();
    assert.match(html, /smtp:\/\/\*\*\*@127\.0\.0\.1:2525/);
    assert.doesNotMatch(html, /secret/);
    assert.equal((await call(notify, '/notify/admin/outbox/x.eml', bearer)).status, 404);
  });
});
