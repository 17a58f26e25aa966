import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { call } from '../helpers/http.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { sendRows } from './helpers.ts';

const HTML = '<p>Hi {{ contact.name }}, <a href="https://shop.example/spring">the spring offers</a>.</p><p><a href="{notify_unsubscribe_url}">Unsubscribe</a></p>';

forEachEngine('campaigns.sendTest', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, baseUrl: 'http://notify.test' }));
    await notify.contacts.upsert({ email: 'ann@example.com', name: 'Ann', lists: ['news'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('real rendered copies whose links work; no send row, no stats, and the unsubscribe link unsubscribes nobody', async () => {
    const c = await notify.campaigns.create({ subject: 'Spring for {{ contact.name }}', html: HTML, list: 'news' });
    const result = await notify.campaigns.sendTest(c.id, { to: ['ann@example.com', 'Editor@Example.com'] });
    assert.deepEqual(result, { sent: ['ann@example.com', 'Editor@Example.com'], failed: [] });
    await sink.waitFor(2);
    const byTo = new Map(sink.messages.map((m) => [m.envelope.to[0].toLowerCase(), m.parsed]));
    const ann = byTo.get('ann@example.com')!;
    assert.equal(ann.subject, 'Spring for Ann', "a known address gets its contact's fields");
    assert.match(String(ann.html), /Hi Ann,/);
    assert.match(byTo.get('editor@example.com')?.subject ?? '', /^Spring for\s*$/, 'an unknown address gets empty fields');

    const link = /href="(http:\/\/notify\.test\/notify\/click\/[^"]+)"/.exec(String(ann.html))?.[1].replace(/&amp;/g, '&');
    assert.ok(link, 'the link is rewritten for click tracking');
    const click = await call(notify, link.replace('http://notify.test', ''));
    assert.equal(click.status, 302);
    assert.equal(click.headers.get('location'), 'https://shop.example/spring');

    const unsubscribe = /href="(http:\/\/notify\.test\/notify\/unsubscribe\/[^"]+)"/.exec(String(ann.html))?.[1].replace(/&amp;/g, '&');
    assert.ok(unsubscribe);
    await call(notify, unsubscribe.replace('http://notify.test', ''));
    assert.equal((await notify.contacts.get('ann@example.com'))?.status, 'subscribed');

    await notify.flush();
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 0, sent: 0, failed: 0, opened: 0, clicked: 0 });
    assert.equal((await sendRows(notify, c.id)).length, 0);
    assert.equal((await notify.context.store.db.selectFrom('notify_events').select('id').execute()).length, 0, 'the click is counted nowhere');
    assert.equal((await notify.campaigns.get(c.id))?.status, 'draft');
  });

  test('bad recipients are refused before anything is sent', async () => {
    const c = await notify.campaigns.create({ subject: 'S', text: 'x', list: 'news' });
    const before = sink.messages.length;
    await assert.rejects(notify.campaigns.sendTest(c.id, { to: [] }), (e) => isNotifyError(e, 'INVALID_INPUT'));
    await assert.rejects(notify.campaigns.sendTest(c.id, {} as never), (e) => isNotifyError(e, 'INVALID_INPUT'));
    await assert.rejects(notify.campaigns.sendTest(c.id, { to: ['ok@example.com', 'not an address'] }), (e) => isNotifyError(e, 'INVALID_EMAIL'));
    await assert.rejects(notify.campaigns.sendTest(c.id, { to: ['a@example.com\r\nBcc: b@example.com'] }), (e) => isNotifyError(e, 'INVALID_EMAIL'));
    assert.equal(sink.messages.length, before);
  });
});

forEachEngine('testMode is a dry run of a campaign', (h) => {
  const { logger, lines } = recordingLogger();
  let notify: Notify;
  before(async () => {
    notify = await createNotify({ ...testOptions(h.url, { testMode: true, logLevel: 'info' }), logger });
    for (const name of ['ann', 'bob']) await notify.contacts.upsert({ email: `${name}@example.com`, lists: ['news'] });
    await notify.contacts.upsert({ email: 'gone@example.com', lists: ['news'], status: 'unsubscribed' });
  });
  after(() => notify.close());

  test('each would-be message is logged; status, send rows and stats stay as they were', async () => {
    const c = await notify.campaigns.create({ subject: 'Dry', text: 'hello', list: 'news' });
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.dryRun, 2);
    assert.equal(r.sent, 0);
    assert.match(r.note ?? '', /testMode: dry run/);
    const logged = lines.filter((l) => l.msg === 'would send (not delivered)');
    assert.deepEqual(logged.map((l) => (l.to as string[])[0]).sort(), ['ann@example.com', 'bob@example.com']);
    assert.equal((await notify.campaigns.get(c.id))?.status, 'draft');
    assert.equal((await sendRows(notify, c.id)).length, 0);
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 0, sent: 0, failed: 0, opened: 0, clicked: 0 });
    assert.equal((await notify.campaigns.send(c.id)).dryRun, 2, 'a second dry run finds the same audience');
  });
});
