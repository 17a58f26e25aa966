import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import type { Mailer, OutgoingMessage } from '../../src/core/mailer.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const T0 = Date.UTC(2026, 0, 1, 9, 0);
const auth = `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}`;

forEachEngine('admin campaign actions', (h) => {
  const mail: OutgoingMessage[] = [];
  const mailer: Mailer = {
    name: 'capture',
    async send(m) {
      mail.push(m);
      return { messageId: m.messageId };
    },
  };
  const notify = useNotify(h, { adminToken: TOKEN, clock: manualClock(T0), mailer });
  let id = 0;
  let cookie = '';
  let csrf = '';
  before(async () => {
    await notify().contacts.upsert({ email: 'ann@example.com', lists: ['news'] });
    id = (await notify().campaigns.create({ subject: 'Actions', text: 'x', list: 'news' })).id;
  });

  const post = (action: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    call(notify(), `/notify/admin/campaigns/${id}/${action}`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
      body: new URLSearchParams(form),
    });

  test('the campaign page sets a session cookie and puts its token in every form', async () => {
    const res = await call(notify(), `/notify/admin/campaigns/${id}`, { headers: { authorization: auth } });
    assert.equal(res.status, 200);
    const setCookie = res.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /notify_admin_session=[A-Za-z0-9_-]{22}; Path=\/notify\/admin; HttpOnly; SameSite=Strict/);
    cookie = setCookie.split(';')[0];
    const html = await res.text();
    csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.match(csrf, /^[A-Za-z0-9_-]{43}$/);
    assert.match(html, /id="schedule-form"/);
    assert.doesNotMatch(html, /id="pause"/, 'a draft offers no pause');
  });

  test('a POST without the token, with another session, or from another site is 403 and changes nothing', async () => {
    const sendAt = new Date(T0 + 3_600_000).toISOString();
    const refused = [
      await post('schedule', { sendAt }),
      await post('schedule', { sendAt, csrf: 'x'.repeat(43) }),
      await post('schedule', { sendAt, csrf }, { cookie: 'notify_admin_session=AAAAAAAAAAAAAAAAAAAAAA' }),
      await post('schedule', { sendAt, csrf }, { origin: 'https://evil.example' }),
      await post('schedule', { sendAt, csrf }, { 'sec-fetch-site': 'cross-site' }),
    ];
    assert.deepEqual(
      refused.map((r) => r.status),
      [403, 403, 403, 403, 403],
    );
    assert.equal((await notify().campaigns.get(id))?.status, 'draft');
  });

  test('with the token: schedule, pause and resume redirect back; a refused action shows the reason', async () => {
    const bad = await post('pause', { csrf });
    assert.equal(bad.status, 409);
    assert.match(await bad.text(), /id="action-error">Cannot pause campaign \d+: it is draft/);
    const past = await post('schedule', { csrf, sendAt: '2020-01-01T00:00' });
    assert.equal(past.status, 422);
    assert.match(await past.text(), /is in the past/);

    const scheduled = await post('schedule', { csrf, sendAt: '2026-01-01T10:00' });
    assert.equal(scheduled.status, 303);
    assert.equal(scheduled.headers.get('location'), `/notify/admin/campaigns/${id}?done=schedule`);
    assert.equal((await notify().campaigns.get(id))?.send_at?.toISOString(), '2026-01-01T10:00:00.000Z');
    assert.equal((await post('pause', { csrf })).status, 303);
    assert.equal((await notify().campaigns.get(id))?.status, 'paused');
    assert.equal((await post('resume', { csrf })).status, 303);
    assert.equal((await notify().campaigns.get(id))?.status, 'scheduled', 'resumed before its time: waits for it');
    const page = await (await call(notify(), `/notify/admin/campaigns/${id}?done=resume`, { headers: { authorization: auth, cookie } })).text();
    assert.match(page, /id="notice">Resumed/);
    assert.match(page, /id="send-at">2026-01-01 10:00 UTC/);
  });

  test('with the token: test-send delivers a copy and counts nothing; cancel is final; bad recipients and unknown ids change nothing', async () => {
    const c = await notify().campaigns.create({ subject: 'Cancel from the page', text: 'Hello', list: 'news' });
    const at = (action: string, form: Record<string, string>, campaign: number | string = c.id) =>
      call(notify(), `/notify/admin/campaigns/${campaign}/${action}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ csrf, ...form }),
      });
    const sentBefore = mail.length;
    const copy = await at('test', { to: 'editor@example.com, second@example.com' });
    assert.equal(copy.status, 303);
    assert.equal(copy.headers.get('location'), `/notify/admin/campaigns/${c.id}?done=test-2`);
    assert.deepEqual(
      mail.slice(sentBefore).map((m) => [m.to[0], m.subject]),
      [
        ['editor@example.com', 'Cancel from the page'],
        ['second@example.com', 'Cancel from the page'],
      ],
    );
    assert.deepEqual(await notify().campaigns.getCampaignStats(c.id), { total: 0, sent: 0, failed: 0, opened: 0, clicked: 0 });

    const badCopy = await at('test', { to: 'not an address' });
    assert.equal(badCopy.status, 422);
    assert.match(await badCopy.text(), /id="action-error">/);
    const noOne = await at('test', { to: '' });
    assert.equal(noOne.status, 422);
    assert.equal(mail.length, sentBefore + 2, 'no copy for a refused test-send');

    const unknown = await at('cancel', {}, 999_999);
    assert.equal(unknown.status, 404);
    const unknownAction = await at('delete', {});
    assert.equal(unknownAction.status, 404);
    assert.equal((await notify().campaigns.get(c.id))?.status, 'draft', 'an unknown action changes nothing');

    const cancelled = await at('cancel', {});
    assert.equal(cancelled.status, 303);
    assert.equal((await notify().campaigns.get(c.id))?.status, 'cancelled');
    const again = await at('resume', {});
    assert.equal(again.status, 409);
    assert.match(await again.text(), /id="action-error">Cannot resume campaign \d+: it is cancelled/);
    const late = await at('schedule', { sendAt: new Date(T0 + 3_600_000).toISOString() });
    assert.equal(late.status, 409);
    assert.equal((await notify().campaigns.get(c.id))?.status, 'cancelled', 'cancel is final');
  });

  test("auto-pause's reason is on the campaign page", async () => {
    const c = await notify().campaigns.create({ subject: 'Bouncy', text: 'x', list: 'news' });
    await notify().context.store.campaigns.transition(c.id, ['draft'], 'paused', { status_reason: 'auto-paused: 20 bounces and 0 complaints in 210 sends (9.5%, above autoPauseBounceRate 5%)' }, T0);
    const html = await (await call(notify(), `/notify/admin/campaigns/${c.id}`, { headers: { authorization: auth } })).text();
    assert.match(html, /id="status-reason">auto-paused: 20 bounces and 0 complaints in 210 sends/);
    assert.match(html, /id="resume"/);
  });
});
