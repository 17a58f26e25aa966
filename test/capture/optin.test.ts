import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { hashToken } from '../../src/core/tokens.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { AJAX, capture, confirmLink, flashOf, form, recordingMailer } from './helpers.ts';

const pathOf = (link: string) => new URL(link).pathname;
const confirmRow = (n: Notify, email: string) =>
  n.context.store.db.selectFrom('notify_contacts').select(['confirm_token_hash', 'consent_ip', 'consent_at', 'status']).where('email_key', '=', email).executeTakeFirstOrThrow();

forEachEngine('double opt-in', (h) => {
  const mailer = recordingMailer();
  const clock = manualClock();
  const views = mkdtempSync(join(tmpdir(), 'notify-optin-views-'));
  mkdirSync(join(views, 'notify'), { recursive: true });
  writeFileSync(join(views, 'notify/subscribe_confirmed.liquid'), '<p>APP OVERRIDE: welcome aboard</p>');
  const notify = useNotify(h, { captureLists: ['news'], doubleOptIn: true, mailer, clock, captureRateLimit: 0, trustProxy: true, trackIpAddress: true, viewsPath: views, fromName: 'News "Desk"' });

  test('pending until the emailed link is confirmed by POST; GET and HEAD confirm nothing', async () => {
    const res = await capture(notify(), form({ email: 'Dana@Example.com', name: 'Dana', list: 'news' }), { referer: 'http://localhost:3000/join', 'x-forwarded-for': '198.51.100.20' });
    assert.equal(res.status, 303);
    assert.deepEqual(flashOf(res.headers.getSetCookie(), 'notify_success'), ['Thanks! Please check your inbox and confirm your subscription.']);
    assert.equal((await notify().contacts.get('dana@example.com'))?.status, 'pending');
    const mail = mailer.sent.at(-1)!;
    assert.deepEqual(mail.to, ['Dana@Example.com']);
    assert.equal(mail.from, '"News \\"Desk\\"" <news@example.com>');
    assert.equal(mail.subject, 'Please confirm your subscription');
    const link = confirmLink(mail);
    assert.ok(link.startsWith('http://localhost:3000/notify/confirm/'));
    assert.ok(mail.html?.includes(`href="${link}"`));
    const token = link.split('/').at(-1)!;
    const row = await confirmRow(notify(), 'dana@example.com');
    assert.equal(row.confirm_token_hash, hashToken(token), 'only the hash is stored');
    assert.equal(row.consent_ip, '198.51.100.20');

    const page = await call(notify(), pathOf(link));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self'/);
    assert.match(await page.text(), new RegExp(`<form method="post" action="/notify/confirm/${token}">`));
    assert.equal((await call(notify(), pathOf(link), { method: 'HEAD' })).status, 200);
    assert.equal((await notify().contacts.get('dana@example.com'))?.status, 'pending', 'a GET or HEAD (mail scanner) confirms nothing');

    clock.advance(60_000);
    const done = await call(notify(), pathOf(link), { method: 'POST', headers: { 'x-forwarded-for': '198.51.100.21' } });
    assert.equal(done.status, 200);
    assert.match(await done.text(), /APP OVERRIDE: welcome aboard/, 'the application view wins');
    const c = await notify().contacts.get('dana@example.com');
    assert.equal(c?.status, 'subscribed');
    assert.equal(c?.consent_at?.getTime(), clock.now(), 'consent is the confirmation');
    assert.deepEqual(c?.lists, ['news']);
    const after = await confirmRow(notify(), 'dana@example.com');
    assert.equal(after.confirm_token_hash, null);
    assert.equal(after.consent_ip, '198.51.100.21');
    const again = await call(notify(), pathOf(link), { method: 'POST' });
    assert.equal(again.status, 404, 'a used link is not valid any more');
    assert.match(await again.text(), /not valid/);
  });

  test('links expire after 7 days; signing up again sends a fresh link and the old one stops working', async () => {
    await capture(notify(), form({ email: 'late@example.com' }), AJAX);
    const first = confirmLink(mailer.sent.at(-1)!);
    clock.advance(7 * 24 * 3600_000 + 1);
    const expired = await call(notify(), pathOf(first), { method: 'POST' });
    assert.equal(expired.status, 410);
    assert.match(await expired.text(), /expired/);
    assert.equal((await notify().contacts.get('late@example.com'))?.status, 'pending');
    await capture(notify(), form({ email: 'late@example.com' }), AJAX);
    const second = confirmLink(mailer.sent.at(-1)!);
    assert.notEqual(second, first);
    assert.equal((await call(notify(), pathOf(first), { method: 'POST' })).status, 404, 'replaced');
    assert.equal((await call(notify(), pathOf(second), { method: 'POST' })).status, 200);
    assert.equal((await notify().contacts.get('late@example.com'))?.status, 'subscribed');
  });

  test('unknown and malformed tokens render subscribe_invalid and change nothing', async () => {
    for (const token of ['x', 'AAAAAAAAAAAAAAAAAAAAAA', '..%2F..%2Fetc', 'A'.repeat(500), '%00']) {
      for (const method of ['GET', 'POST']) {
        const res = await call(notify(), `/notify/confirm/${token}`, { method });
        assert.equal(res.status, 404, `${method} ${token}`);
        assert.match(await res.text(), /not valid/);
      }
    }
  });

  test('re-subscribing an unsubscribed address needs a confirmed link; bounced and complained get nothing', async () => {
    await notify().contacts.upsert({ email: 'gone@example.com', status: 'unsubscribed' });
    const sentBefore = mailer.sent.length;
    const res = await capture(notify(), form({ email: 'gone@example.com' }), AJAX);
    assert.equal(res.status, 200);
    assert.equal((await notify().contacts.get('gone@example.com'))?.status, 'unsubscribed', 'the post itself lifts nothing');
    const mail = mailer.sent.at(-1)!;
    assert.equal(mailer.sent.length, sentBefore + 1);
    assert.equal(mail.subject, 'Confirm that you want to subscribe again');
    await call(notify(), pathOf(confirmLink(mail)));
    assert.equal((await notify().contacts.get('gone@example.com'))?.status, 'unsubscribed', 'GET lifts nothing');
    assert.equal((await call(notify(), pathOf(confirmLink(mail)), { method: 'POST' })).status, 200);
    assert.equal((await notify().contacts.get('gone@example.com'))?.status, 'subscribed');
    for (const status of ['bounced', 'complained'] as const) {
      await notify().contacts.upsert({ email: `${status}-optin@example.com`, status });
      const n = mailer.sent.length;
      assert.equal((await capture(notify(), form({ email: `${status}-optin@example.com` }), AJAX)).status, 200);
      assert.equal(mailer.sent.length, n, `no email to a ${status} address`);
      assert.equal((await notify().contacts.get(`${status}-optin@example.com`))?.status, status);
    }
  });

  test('one address posted over and over gets at most 3 confirmation emails an hour (subscription bombing)', async () => {
    const n = mailer.sent.length;
    for (let i = 0; i < 6; i++) {
      const res = await capture(notify(), form({ email: 'victim@example.com' }), { ...AJAX, 'x-forwarded-for': `203.0.113.${i + 1}` });
      assert.equal(res.status, 200, 'the same answer every time: the poster learns nothing');
    }
    assert.equal(mailer.sent.length - n, 3);
  });

  test('a mailer that throws answers 503 and stores nothing', async () => {
    const original = mailer.send;
    mailer.send = async () => {
      throw new Error('SMTP down');
    };
    try {
      const res = await capture(notify(), form({ email: 'fail@example.com' }), AJAX);
      assert.equal(res.status, 503);
      assert.deepEqual(((await res.json()) as { code: string }).code, 'unavailable');
      assert.equal(await notify().contacts.get('fail@example.com'), undefined);
    } finally {
      mailer.send = original;
    }
  });
});

forEachEngine('re-subscribe without doubleOptIn', (h) => {
  const mailer = recordingMailer();
  const notify = useNotify(h, { mailer, captureRateLimit: 0 });

  test('new addresses subscribe at once; an unsubscribed one still needs a confirmed link; no IP without trackIpAddress', async () => {
    assert.equal((await capture(notify(), form({ email: 'new@example.com' }), AJAX)).status, 200);
    assert.equal((await notify().contacts.get('new@example.com'))?.status, 'subscribed');
    assert.equal(mailer.sent.length, 0);
    await notify().contacts.upsert({ email: 'back@example.com', status: 'unsubscribed' });
    await capture(notify(), form({ email: 'back@example.com' }), AJAX);
    assert.equal((await notify().contacts.get('back@example.com'))?.status, 'unsubscribed');
    assert.equal(mailer.sent.length, 1);
    const link = confirmLink(mailer.sent[0]);
    assert.equal((await call(notify(), pathOf(link), { method: 'POST' })).status, 200);
    assert.equal((await notify().contacts.get('back@example.com'))?.status, 'subscribed');
    assert.equal((await confirmRow(notify(), 'back@example.com')).consent_ip, null);
  });
});
