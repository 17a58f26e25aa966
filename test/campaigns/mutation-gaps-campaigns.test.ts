// Campaigns through the library, where the HTTP routes refuse bad input before the library sees it:
// what each refusal of create, update, list and the lifecycle says and names, ids as text, an update
// that keeps every field it was not given, and the sendAt forms schedule takes or refuses.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCampaignsService } from '../../src/core/campaigns.ts';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';

/** the refusal's code, message and details, or a failure when nothing was refused */
async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    assert.ok(isNotifyError(err), String(err));
    return { code: err.code, message: err.message, details: err.details };
  }
  assert.fail('not refused');
}

const NOW = Date.UTC(2030, 0, 1, 12);

forEachEngine('campaigns through the library: bad and odd input', (h) => {
  test('create: a non-object, and each bad field refused with its name; nothing stored', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    const bad = (input: unknown) => refusal(notify.campaigns.create(input as never));
    for (const input of [null, 'hello']) assert.deepEqual(await bad(input), { code: 'INVALID_INPUT', message: 'campaigns.create() needs an object', details: undefined });
    const ok = { subject: 'S', text: 'x' };
    for (const field of ['name', 'list', 'fromName', 'fromEmail', 'trackOpens', 'trackClicks']) {
      const r = await bad({ ...ok, [field]: 5 });
      assert.deepEqual([r.code, r.details?.field], ['INVALID_INPUT', field], field);
    }
    const dataRefused = { code: 'INVALID_INPUT', message: 'data must be an object of at most 65536 bytes of JSON', details: { field: 'data' } };
    assert.deepEqual(await bad({ ...ok, data: 'text' }), dataRefused);
    assert.deepEqual(await bad({ ...ok, data: ['a'] }), dataRefused);
    // {"k":"..."} is 8 characters of JSON around the value
    assert.deepEqual(await bad({ ...ok, data: { k: 'x'.repeat(65536 - 8 + 1) } }), dataRefused);
    assert.deepEqual(await notify.campaigns.list(), [], 'nothing stored');
    const full = await notify.campaigns.create({ ...ok, data: { k: 'x'.repeat(65536 - 8) } });
    assert.equal(JSON.stringify(full.data).length, 65536, 'exactly the limit is accepted');
  });

  test('create: a segment given as JSON text is stored as its object; a segment naming a missing list is NOT_FOUND', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    await notify.lists.create({ name: 'seg-vip' });
    const c = await notify.campaigns.create({ subject: 'S', text: 'x', segment: JSON.stringify({ list: 'seg-vip' }) });
    assert.deepEqual(c.segment, { list: 'seg-vip' });
    const r = await refusal(notify.campaigns.create({ subject: 'S2', text: 'x', segment: { list: 'seg-missing' } }));
    assert.equal(r.code, 'NOT_FOUND');
    assert.equal((await notify.campaigns.list()).filter((x) => x.subject === 'S2').length, 0);
  });

  test('ids: digits as text find the campaign; other text, arrays and booleans are refused naming the id', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    // ten first, so that the id has more than one digit
    for (let i = 0; i < 10; i++) await notify.campaigns.create({ subject: `Before ${i}`, text: 'x' });
    const c = await notify.campaigns.create({ subject: 'By id', text: 'x' });
    assert.ok(c.id >= 10);
    assert.equal((await notify.campaigns.get(String(c.id) as never))?.id, c.id);
    for (const id of [` ${c.id}`, `${c.id} `, `${c.id}x`, [c.id], true, 'abc', 0]) {
      assert.deepEqual(await refusal(notify.campaigns.get(id as never)), { code: 'INVALID_INPUT', message: `Invalid campaign id ${JSON.stringify(id)}`, details: { field: 'id' } }, JSON.stringify(id));
    }
    const missing = { code: 'NOT_FOUND', message: 'Campaign 987654 not found', details: { campaignId: 987654 } };
    assert.deepEqual(await refusal(notify.campaigns.update(987654, { subject: 'x' })), missing);
    assert.deepEqual(await refusal(notify.campaigns.pause(987654)), missing);
    assert.deepEqual(await refusal(notify.campaigns.audience(987654)), missing);
  });

  test('list: options must be an object; limit from 1 to 1000; status empty or null means any, an unknown one is named', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    for (let i = 0; i < 2; i++) await notify.campaigns.create({ subject: `L${i}`, text: 'x' });
    for (const options of [null, 'all']) {
      assert.deepEqual(await refusal(notify.campaigns.list(options as never)), { code: 'INVALID_INPUT', message: 'campaigns.list() takes an options object', details: undefined });
    }
    for (const limit of [0, 1001, 2.5]) {
      assert.deepEqual(await refusal(notify.campaigns.list({ limit })), { code: 'INVALID_INPUT', message: `limit must be a whole number from 1 to 1000 (got ${limit})`, details: { field: 'limit' } });
    }
    assert.equal((await notify.campaigns.list({ limit: 1 })).length, 1);
    assert.ok((await notify.campaigns.list({ limit: 1000 })).length >= 2);
    const all = (await notify.campaigns.list()).length;
    assert.equal((await notify.campaigns.list({ status: null as never })).length, all);
    assert.equal((await notify.campaigns.list({ status: '' as never })).length, all);
    assert.deepEqual(await refusal(notify.campaigns.list({ status: 'done' as never })), {
      code: 'INVALID_INPUT',
      message: 'status must be one of draft, scheduled, sending, paused, cancelled, sent (got "done")',
      details: { field: 'status' },
    });
  });

  test('update: every field not given is kept, a new body replaces the old one, and a campaign without a list stays without', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-campaign-md-'));
    writeFileSync(join(dir, 'news.md'), '# News');
    const notify = await createNotify(testOptions(h.url, { markdownPath: dir }));
    t.after(async () => {
      await notify.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await notify.lists.create({ name: 'upd' });
    const input = {
      subject: 'Before',
      name: 'Spring',
      markdownFile: 'news.md',
      text: 'plain',
      layout: false as const,
      list: 'upd',
      segment: { list: 'upd' },
      fromName: 'Ann',
      fromEmail: 'ann@example.com',
      data: { a: 1 },
      headers: { 'X-Campaign': 'spring' },
      trackOpens: false,
      trackClicks: true,
    };
    const c = await notify.campaigns.create(input);
    assert.equal(c.markdown_file, 'news.md');
    const fields = (x: typeof c) => [x.name, x.layout, x.markdown_file, x.text, x.list, x.segment, x.from_name, x.from_email, x.data, x.headers, x.track_opens, x.track_clicks];
    const u = await notify.campaigns.update(c.id, { subject: 'After' });
    assert.equal(u.subject, 'After');
    assert.deepEqual(fields(u), fields(c));
    // markdownFile -> html: the file goes; html -> markdown: the html goes
    const html = await notify.campaigns.update(c.id, { html: '<p>hi</p>' });
    assert.deepEqual([html.html, html.markdown_file, html.text], ['<p>hi</p>', null, 'plain']);
    const md = await notify.campaigns.update(c.id, { markdown: '# hi' });
    assert.deepEqual([md.markdown, md.html], ['# hi', null]);
    const back = await notify.campaigns.update(c.id, { markdownFile: 'news.md' });
    assert.deepEqual([back.markdown_file, back.markdown], ['news.md', null]);
    const textOnly = await notify.campaigns.create({ subject: 'No list', text: 'x' });
    const renamed = await notify.campaigns.update(textOnly.id, { subject: 'Still no list' });
    assert.deepEqual([renamed.subject, renamed.list, renamed.text], ['Still no list', null, 'x']);
  });

  test('update: a non-object refused; a campaign past update is INVALID_STATE before its fields are looked at', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'U', text: 'x' });
    for (const fields of [null, 'subject']) {
      assert.deepEqual(await refusal(notify.campaigns.update(c.id, fields as never)), { code: 'INVALID_INPUT', message: 'campaigns.update() needs an object of fields', details: undefined });
    }
    assert.equal((await notify.campaigns.get(c.id))?.subject, 'U');
    await notify.campaigns.cancel(c.id);
    for (const fields of [null, { list: 'no-such-list' }, { subject: 5 }]) {
      assert.deepEqual(await refusal(notify.campaigns.update(c.id, fields as never)), {
        code: 'INVALID_STATE',
        message: `Cannot update campaign ${c.id}: it is cancelled (update needs draft or scheduled or paused)`,
        details: { campaignId: c.id, status: 'cancelled', action: 'update' },
      });
    }
  });

  test('countAudience (the admin page\'s count for a new campaign): a non-object refused; an empty segment text means no segment', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    const campaigns = createCampaignsService(notify.context);
    for (const target of [null, 'news']) {
      assert.deepEqual(await refusal(campaigns.countAudience(target as never)), { code: 'INVALID_INPUT', message: 'countAudience() needs { list?, segment? }', details: undefined });
    }
    assert.equal((await refusal(campaigns.countAudience({ list: 5 as never }))).details?.field, 'list');
    await notify.contacts.upsert({ email: 'count1@example.com', lists: ['count'] });
    await notify.contacts.upsert({ email: 'count2@example.com', lists: ['count'] });
    assert.deepEqual(await campaigns.countAudience({ list: 'count', segment: '' }), { count: 2 });
  });

  test('lifecycle refusals name the action, the status and what it needs', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'L', text: 'x' });
    assert.deepEqual(await refusal(notify.campaigns.pause(c.id)), {
      code: 'INVALID_STATE',
      message: `Cannot pause campaign ${c.id}: it is draft (pause needs scheduled or sending)`,
      details: { campaignId: c.id, status: 'draft', action: 'pause' },
    });
  });
});

forEachEngine('schedule: the sendAt forms taken and refused', (h) => {
  const at = (s: string) => Date.UTC(2030, 4, 1, 9, 0, Number(s));
  test('UTC without an offset, with seconds and milliseconds, a space for T, blanks around; offsets with and without a colon', async (t) => {
    const notify = await createNotify(testOptions(h.url, { clock: manualClock(NOW) }));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'When', text: 'x' });
    const sendAt = async (value: string) => (await notify.campaigns.schedule(c.id, value)).send_at?.getTime();
    assert.equal(await sendAt('2030-05-01T09:00'), at('0'));
    assert.equal(await sendAt(' 2030-05-01 09:00:30 '), at('30'));
    assert.equal(await sendAt('2030-05-01T09:00:30.125'), at('30') + 125);
    assert.equal(await sendAt('2030-05-01T09:00:30.1'), at('30') + 100);
    assert.equal(await sendAt('2030-05-01T09:00Z'), at('0'));
    assert.equal(await sendAt(' 2030-05-01 09:00:30z '), at('30'));
    assert.equal(await sendAt('2030-05-01T09:00:30.123456789Z'), at('30') + 123);
    assert.equal(await sendAt('2030-05-01T11:00+02:00'), at('0'));
    assert.equal(await sendAt('2030-05-01T07:00-0200'), at('0'));
  });

  test('refused, naming sendAt: no such day or hour, a fourth fraction digit without an offset, numbers and invalid Dates', async (t) => {
    const notify = await createNotify(testOptions(h.url, { clock: manualClock(NOW) }));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'Bad when', text: 'x' });
    const form = (v: unknown) => ({ code: 'INVALID_INPUT', message: `sendAt must be a Date or an ISO 8601 time such as 2026-05-01T09:00:00Z (got ${JSON.stringify(v)})`, details: { field: 'sendAt' } });
    for (const value of ['2030-02-30T09:00', '2030-05-01T24:00Z', '2030-05-01T24:00', '2030-05-01T09:00:00.1234', '2030-05-01', 'soon', Date.UTC(2030, 4, 1)]) {
      assert.deepEqual(await refusal(notify.campaigns.schedule(c.id, value as never)), form(value), String(value));
    }
    assert.deepEqual(await refusal(notify.campaigns.schedule(c.id, new Date('nope'))), form('Invalid Date'));
    assert.equal((await notify.campaigns.get(c.id))?.status, 'draft', 'nothing scheduled');
  });

  test('now itself is not the past; a millisecond before is refused naming sendAt', async (t) => {
    const notify = await createNotify(testOptions(h.url, { clock: manualClock(NOW) }));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'Now', text: 'x' });
    assert.equal((await notify.campaigns.schedule(c.id, new Date(NOW))).send_at?.getTime(), NOW);
    const past = await refusal(notify.campaigns.schedule(c.id, new Date(NOW - 1)));
    assert.deepEqual([past.code, past.details], ['INVALID_INPUT', { field: 'sendAt' }]);
    assert.match(past.message, /is in the past/);
  });

  test('resume: a campaign paused before its time waits again; one whose time has come (or is now) is sending', async (t) => {
    const clock = manualClock(NOW);
    const notify = await createNotify(testOptions(h.url, { clock }));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'Resume', text: 'x' });
    await notify.campaigns.schedule(c.id, new Date(NOW + minutes(10)));
    await notify.campaigns.pause(c.id);
    assert.equal((await notify.campaigns.resume(c.id)).status, 'scheduled');
    await notify.campaigns.pause(c.id);
    clock.set(NOW + minutes(10));
    assert.equal((await notify.campaigns.resume(c.id)).status, 'sending', 'due exactly now');
    const late = await notify.campaigns.create({ subject: 'Resume late', text: 'x' });
    await notify.campaigns.schedule(late.id, new Date(NOW + minutes(20)));
    await notify.campaigns.pause(late.id);
    clock.set(NOW + minutes(30));
    assert.equal((await notify.campaigns.resume(late.id)).status, 'sending');
  });
});
