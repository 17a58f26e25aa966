import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { round } from '../../src/cli/commands/worker-run.ts';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { sendRows, silenceConsole } from './helpers.ts';

const T0 = Date.UTC(2026, 4, 1, 8, 0);

const invalidState = (status: string) => (e: unknown) => isNotifyError(e, 'INVALID_STATE') && e.message.includes(`it is ${status}`);

forEachEngine('campaign lifecycle', (h) => {
  const clock = manualClock(T0);
  let notify: Notify;
  before(async () => {
    notify = await createNotify({ ...testOptions(h.url), clock });
    for (const name of ['ann', 'bob', 'cy']) await notify.contacts.upsert({ email: `${name}@example.com`, lists: ['news'] });
    await notify.lists.create({ name: 'nobody' });
  });
  test.after(() => notify.close());

  test('a list that does not exist is NOT_FOUND at create, and nothing is stored', async () => {
    await assert.rejects(notify.campaigns.create({ subject: 'S', text: 'x', list: 'no-such-list' }), (e) => isNotifyError(e, 'NOT_FOUND'));
    assert.deepEqual(await notify.campaigns.list(), []);
  });

  test('scheduled: notify:send-campaign and the worker send nothing before sendAt, the worker starts it at sendAt', async () => {
    const restore = silenceConsole();
    try {
      const c = await notify.campaigns.create({ subject: 'Later', text: 'hello', list: 'news' });
      const scheduled = await notify.campaigns.schedule(c.id, new Date(T0 + minutes(60)).toISOString());
      assert.equal(scheduled.status, 'scheduled');
      assert.equal(scheduled.send_at?.getTime(), T0 + minutes(60));

      const early = await notify.campaigns.send(c.id);
      assert.equal(early.sent, 0);
      assert.match(early.note ?? '', /scheduled for 2026-05-01T09:00:00.000Z; nothing is sent before then/);
      clock.advance(minutes(59));
      await round(notify);
      assert.equal((await sendRows(notify, c.id)).length, 0, 'one minute early: nothing');
      assert.equal((await notify.campaigns.get(c.id))?.status, 'scheduled');

      clock.advance(minutes(1));
      await round(notify);
      assert.deepEqual((await sendRows(notify, c.id)).map((r) => r.status), ['sent', 'sent', 'sent']);
      assert.equal((await notify.campaigns.get(c.id))?.status, 'sent');
    } finally {
      restore();
    }
  });

  test('sendAt: in the past, unparseable or not a time is INVALID_INPUT; a time without an offset is UTC', async () => {
    const c = await notify.campaigns.create({ subject: 'When', text: 'x', list: 'news' });
    const now = clock.now();
    // days a month does not have (Date.parse rolls 2026-02-30 over to 2 March), hour 24, a week date
    const impossible = ['2026-02-30T09:00:00Z', '2026-04-31T10:00', '2026-06-31T10:00:00+02:00', '2026-05-01T24:00:00Z', '2026-W18-5T09:00Z'];
    for (const bad of [new Date(now - 1000).toISOString(), 'tomorrow', '2026-13-45T00:00:00Z', '', '1714550400', new Date(Number.NaN), ...impossible]) {
      await assert.rejects(notify.campaigns.schedule(c.id, bad as string), (e) => isNotifyError(e, 'INVALID_INPUT') && /sendAt/.test(e.message), String(bad));
    }
    assert.equal((await notify.campaigns.get(c.id))?.status, 'draft', 'nothing changed');
    const at = new Date(now + minutes(30)).toISOString().slice(0, 16);
    const s = await notify.campaigns.schedule(c.id, at);
    assert.equal(s.send_at?.toISOString(), `${at}:00.000Z`);
    const moved = await notify.campaigns.schedule(c.id, new Date(now + minutes(90)));
    assert.equal(moved.send_at?.getTime(), now + minutes(90), 'a scheduled campaign can be moved');
  });

  test('actions on an unknown id are NOT_FOUND; a malformed id is INVALID_INPUT', async () => {
    const later = new Date(clock.now() + minutes(5));
    for (const action of [
      () => notify.campaigns.schedule(9999, later),
      () => notify.campaigns.pause(9999),
      () => notify.campaigns.resume(9999),
      () => notify.campaigns.cancel(9999),
      () => notify.campaigns.update(9999, { subject: 'x' }),
      () => notify.campaigns.delete(9999),
      () => notify.campaigns.sendTest(9999, { to: ['t@example.com'] }),
      () => notify.campaigns.audience(9999),
      () => notify.campaigns.send(9999),
    ]) {
      await assert.rejects(action(), (e) => isNotifyError(e, 'NOT_FOUND'));
    }
    await assert.rejects(notify.campaigns.pause('abc' as unknown as number), (e) => isNotifyError(e, 'INVALID_INPUT'));
  });

  test('invalid transitions are INVALID_STATE naming the current status', async () => {
    const draft = await notify.campaigns.create({ subject: 'D', text: 'x', list: 'news' });
    await assert.rejects(notify.campaigns.pause(draft.id), invalidState('draft'));
    await assert.rejects(notify.campaigns.resume(draft.id), invalidState('draft'));

    const cancelled = await notify.campaigns.create({ subject: 'C', text: 'x', list: 'news' });
    assert.equal((await notify.campaigns.cancel(cancelled.id)).status, 'cancelled');
    await assert.rejects(notify.campaigns.resume(cancelled.id), invalidState('cancelled'));
    await assert.rejects(notify.campaigns.schedule(cancelled.id, new Date(clock.now() + minutes(5))), invalidState('cancelled'));
    await assert.rejects(notify.campaigns.cancel(cancelled.id), invalidState('cancelled'));
    await assert.rejects(notify.campaigns.update(cancelled.id, { subject: 'again' }), invalidState('cancelled'));
    const r = await notify.campaigns.send(cancelled.id);
    assert.equal(r.sent, 0);
    assert.match(r.note ?? '', /is cancelled; nothing is sent/);
    assert.equal((await sendRows(notify, cancelled.id)).length, 0);

    const sending = await notify.campaigns.create({ subject: 'S', text: 'x', list: 'news' });
    await notify.context.store.campaigns.transition(sending.id, ['draft'], 'sending', {}, clock.now());
    await assert.rejects(notify.campaigns.update(sending.id, { subject: 'changed' }), invalidState('sending'));
    await assert.rejects(notify.campaigns.delete(sending.id), invalidState('sending'));
    await assert.rejects(notify.campaigns.resume(sending.id), invalidState('sending'));
    assert.equal((await notify.campaigns.get(sending.id))?.subject, 'S');
  });

  test('update changes a draft, a scheduled or a paused campaign; checks as create does', async () => {
    const c = await notify.campaigns.create({ subject: 'Old', html: '<p>old</p>', list: 'news' });
    const u = await notify.campaigns.update(c.id, { subject: 'New {{ contact.name }}', markdown: '# new' });
    assert.deepEqual([u.subject, u.html, u.markdown, u.list], ['New {{ contact.name }}', null, '# new', 'news']);
    await assert.rejects(notify.campaigns.update(c.id, { list: 'no-such-list' }), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.campaigns.update(c.id, { subject: 'a\r\nBcc: x@example.com' }), (e) => isNotifyError(e, 'HEADER_INJECTION') || isNotifyError(e, 'INVALID_INPUT'));
    await assert.rejects(notify.campaigns.update(c.id, { subject: '{% if %}' }), (e) => isNotifyError(e, 'TEMPLATE_ERROR'));
    assert.equal((await notify.campaigns.get(c.id))?.list, 'news', 'a refused update changes nothing');
    await notify.campaigns.schedule(c.id, new Date(clock.now() + minutes(10)));
    assert.equal((await notify.campaigns.update(c.id, { name: 'Spring' })).name, 'Spring');
    await notify.campaigns.pause(c.id);
    assert.equal((await notify.campaigns.update(c.id, { list: 'nobody' })).list, 'nobody');
  });

  test('delete removes a draft only', async () => {
    const c = await notify.campaigns.create({ subject: 'Gone', text: 'x', list: 'news' });
    await notify.campaigns.delete(c.id);
    assert.equal(await notify.campaigns.get(c.id), undefined);
    await assert.rejects(notify.campaigns.delete(c.id), (e) => isNotifyError(e, 'NOT_FOUND'));
  });

  test('list by status, in pages', async () => {
    const all = await notify.campaigns.list({ limit: 1000 });
    assert.ok(all.length >= 5);
    assert.deepEqual(
      all.map((c) => c.id),
      [...all.map((c) => c.id)].sort((a, b) => a - b),
    );
    const cancelled = await notify.campaigns.list({ status: 'cancelled' });
    assert.ok(cancelled.length >= 1 && cancelled.every((c) => c.status === 'cancelled'));
    const first = await notify.campaigns.list({ limit: 2 });
    const second = await notify.campaigns.list({ limit: 2, after: first[1].id });
    assert.deepEqual(
      [...first, ...second].map((c) => c.id),
      all.slice(0, 4).map((c) => c.id),
    );
    await assert.rejects(notify.campaigns.list({ status: 'done' as never }), (e) => isNotifyError(e, 'INVALID_INPUT') && /status must be one of/.test(e.message));
    await assert.rejects(notify.campaigns.list({ limit: 0 }), (e) => isNotifyError(e, 'INVALID_INPUT'));
  });

  test('an empty audience is reported: EMPTY_AUDIENCE from a send, a due scheduled one is paused with the reason', async () => {
    const restore = silenceConsole();
    try {
      const c = await notify.campaigns.create({ subject: 'Nobody', text: 'x', list: 'nobody' });
      assert.deepEqual(await notify.campaigns.audience(c.id), { count: 0 });
      await assert.rejects(notify.campaigns.send(c.id), (e) => isNotifyError(e, 'EMPTY_AUDIENCE') && /no subscribed contact in list "nobody"/.test(e.message));
      assert.equal((await notify.campaigns.get(c.id))?.status, 'draft', 'not marked sent');

      await notify.campaigns.schedule(c.id, new Date(clock.now() + minutes(1)));
      clock.advance(minutes(1));
      await round(notify);
      const after = await notify.campaigns.get(c.id);
      assert.equal(after?.status, 'paused');
      assert.match(after?.status_reason ?? '', /not started: its audience is empty/);
    } finally {
      restore();
    }
  });

  test('audience counts who a send would reach now (suppressed contacts and those already sent left out)', async () => {
    await notify.contacts.upsert({ email: 'gone@example.com', lists: ['aud'], status: 'unsubscribed' });
    await notify.contacts.upsert({ email: 'here@example.com', lists: ['aud'] });
    await notify.contacts.upsert({ email: 'here2@example.com', lists: ['aud'] });
    const c = await notify.campaigns.create({ subject: 'Aud', text: 'x', list: 'aud' });
    assert.deepEqual(await notify.campaigns.audience(c.id), { count: 2 });
    await notify.campaigns.send(c.id);
    assert.deepEqual(await notify.campaigns.audience(c.id), { count: 0 });
  });
});
