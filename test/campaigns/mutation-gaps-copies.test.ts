import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createCampaignsService } from '../../src/core/campaigns.ts';
import type { Mailer, OutgoingMessage } from '../../src/core/mailer.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';

/** an address of 254 characters, the most an address may have */
const LONGEST = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.io`;

const invalid = (field: string, message: RegExp) => (e: unknown) => isNotifyError(e) && e.code === 'INVALID_INPUT' && message.test(e.message) && (field === '' || e.details?.field === field);

// A campaign's test copies and its preview, through the library: what the copies say, who gets them,
// what each refusal says, and which contact a preview is personalised for (the service the admin's
// compose page calls: the route passes no empty contact and only form fields).
forEachEngine('campaign copies: sendTest and preview', (h) => {
  const sent: OutgoingMessage[] = [];
  // bounce@ is refused for good: a copy that fails is reported, the others still go
  const mailer: Mailer = {
    name: 'copies',
    async send(m) {
      if (m.to[0] === 'bounce@example.com') throw Object.assign(new Error('550 no such user'), { responseCode: 550 });
      sent.push(m);
      return { messageId: m.messageId };
    },
  };
  const { logger, lines } = recordingLogger();
  const dir = mkdtempSync(join(tmpdir(), 'notify-copies-'));
  let notify: Notify;
  let ann: { id: number };
  const preview: ReturnType<typeof createCampaignsService>['preview'] = (input, opts) => createCampaignsService(notify.context).preview(input, opts);
  before(async () => {
    writeFileSync(join(dir, 'offer.md'), '# The {{ offer }} offer\n');
    notify = await createNotify(testOptions(h.url, { mailer, logger, markdownPath: dir }));
    // ids past 9, so that a two-digit id is looked up as an id
    for (let i = 0; i < 10; i++) await notify.contacts.upsert({ email: `filler${i}@example.com` });
    ann = await notify.contacts.upsert({ email: 'ann@example.com', name: 'Ann', attributes: { city: 'Paris' } });
    await notify.contacts.upsert({ email: '7@example.com', name: 'Seven' });
    await notify.contacts.upsert({ email: 'nine@example.c9', name: 'Nine' });
    await notify.contacts.upsert({ email: LONGEST, name: 'Longest' });
  });
  after(async () => {
    await notify.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a test copy to a known address carries that contact's id and attributes", async () => {
    const c = await notify.campaigns.create({ subject: 'For {{ contact.name }}', html: '<p>{{ contact.id }} in {{ contact.attributes.city }}</p>' });
    sent.length = 0;
    assert.deepEqual(await notify.campaigns.sendTest(c.id, { to: ['ann@example.com'] }), { sent: ['ann@example.com'], failed: [] });
    assert.match(String(sent[0].html), new RegExp(`<p>${ann.id} in Paris</p>`));
  });

  test('a copy the mail server refuses is reported failed with its error, the others sent; the log says which', async () => {
    const c = await notify.campaigns.create({ subject: 'Copies', text: 'hello' });
    const result = await notify.campaigns.sendTest(c.id, { to: ['bounce@example.com', 'ann@example.com'] });
    assert.deepEqual(result.sent, ['ann@example.com']);
    assert.equal(result.failed.length, 1);
    assert.equal(result.failed[0].to, 'bounce@example.com');
    assert.match(result.failed[0].error, /550 no such user/);
    const line = lines.find((l) => l.msg === 'test copies sent (not counted)' && l.campaignId === c.id);
    assert.ok(line, 'the log names the campaign');
    assert.deepEqual([line.sent, line.failed], [result.sent, result.failed]);
  });

  test('sendTest refuses a missing list, none, or more than 20 addresses; 20 go', async () => {
    const c = await notify.campaigns.create({ subject: 'Limits', text: 'hello' });
    const refusal = invalid('to', /^sendTest needs \{ to: \[\.\.\.\] \} with 1 to 20 addresses$/);
    await assert.rejects(notify.campaigns.sendTest(c.id, null as never), refusal);
    await assert.rejects(notify.campaigns.sendTest(c.id, { to: [] }), refusal);
    const many = Array.from({ length: 21 }, (_, i) => `t${i}@example.com`);
    await assert.rejects(notify.campaigns.sendTest(c.id, { to: many }), refusal);
    assert.equal((await notify.campaigns.sendTest(c.id, { to: many.slice(0, 20) })).sent.length, 20);
  });

  test("a preview's unsubscribe link goes nowhere; its name, data and markdown file are the campaign's", async () => {
    const p = await preview({ name: 'Spring', subject: 'Hi', markdownFile: 'offer.md', data: { offer: 'spring' } });
    assert.match(String(p.html), /The spring offer/);
    const q = await preview({ name: 'Spring', subject: '{{ campaign.name }} news', html: '<a href="{notify_unsubscribe_url}">Unsubscribe</a>' });
    assert.equal(q.subject, 'Spring news');
    assert.match(String(q.html), /href="#unsubscribe-link-of-the-recipient"/);
    const unnamed = await preview({ subject: '[{{ campaign.name }}]', text: 'x' });
    assert.equal(unnamed.subject, '[]');
  });

  test('preview refuses what is not campaign fields', async () => {
    await assert.rejects(preview(null as never), invalid('', /^campaigns\.preview\(\) needs the campaign fields$/));
    await assert.rejects(preview('subject' as never), invalid('', /^campaigns\.preview\(\) needs the campaign fields$/));
  });

  test('preview contact: by id, id as text, email (digits first or last, 254 characters); none for null or empty; NOT_FOUND names it', async () => {
    const input = { subject: 'Hi {{ contact.name }}', text: 'x' };
    assert.deepEqual((await preview(input, { contact: ann.id })).contact, { id: ann.id, email: 'ann@example.com' });
    assert.equal((await preview(input, { contact: String(ann.id) })).subject, 'Hi Ann');
    assert.equal((await preview(input, { contact: '7@example.com' })).subject, 'Hi Seven');
    assert.equal((await preview(input, { contact: 'nine@example.c9' })).subject, 'Hi Nine', 'an address ending in a digit is no id');
    assert.equal(LONGEST.length, 254);
    assert.equal((await preview(input, { contact: LONGEST })).subject, 'Hi Longest');
    for (const none of [null, '']) assert.equal((await preview(input, { contact: none })).contact, null);
    const missing = (ref: unknown) => (e: unknown) => isNotifyError(e) && e.code === 'NOT_FOUND' && e.message === `No contact ${JSON.stringify(ref)} to personalise the preview for` && e.details?.field === 'contact';
    for (const ref of ['nobody@example.com', 999999, 1.5, `${'a'.repeat(250)}@x.io`]) await assert.rejects(preview(input, { contact: ref as never }), missing(ref));
  });
});
