// List-Id, Feedback-ID and the EHLO name, as a receiving SMTP server sees them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listHeaders, listLabel } from '../../src/core/list-headers.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const header = (m: SinkMessage, name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(m.raw.toString('latin1').split('\r\n\r\n')[0])?.[1];

describe('listHeaders', () => {
  test('fills {kind}, {id} and {list}; keeps everything else; no List-Id without a list or a domain', () => {
    const config = { listIdDomain: 'news.example', feedbackId: '{id}:{list}:{kind}:acme' };
    assert.deepEqual(listHeaders(config, { kind: 'campaign', id: 7, list: 'Spring Readers!' }), { 'List-Id': '<spring-readers.news.example>', 'Feedback-ID': '7:spring-readers:campaign:acme' });
    assert.deepEqual(listHeaders(config, { kind: 'send' }), { 'Feedback-ID': '::send:acme' });
    assert.deepEqual(listHeaders({ listIdDomain: '', feedbackId: '' }, { kind: 'campaign', id: 1, list: 'x' }), {});
    assert.equal(listLabel('Zürich Café'), 'zurich-cafe');
    assert.equal(listLabel('!!!'), 'list');
  });

  const bad: [string, Record<string, unknown>][] = [
    ['listIdDomain with a space', { listIdDomain: 'news example' }],
    ['listIdDomain with an @', { listIdDomain: 'lists@example.com' }],
    ['feedbackId with a line break (header injection)', { feedbackId: 'a\r\nBcc: x@example.com' }],
    ['smtpName with a space', { smtpName: 'mta example' }],
  ];
  for (const [what, options] of bad) {
    test(`${what}: CONFIG_INVALID at start`, async () => {
      await assert.rejects(createNotify(testOptions('sqlite::memory:', options)), (err) => isNotifyError(err, 'CONFIG_INVALID') && err.message.includes(`'${Object.keys(options)[0]}'`));
    });
  }
});

forEachEngine('List-Id, Feedback-ID and EHLO over SMTP', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, listIdDomain: 'news.example', feedbackId: '{id}:{list}:{kind}:acme', smtpName: 'mta.news.example' }));
  });
  after(async () => {
    await notify?.close();
    await sink?.close();
  });

  test('a list campaign carries List-Id and Feedback-ID; a campaign to everyone has no List-Id; a drip and a send have their kind', async () => {
    await notify.lists.create({ name: 'Spring Readers' });
    await notify.contacts.upsert({ email: 'ann@example.com', lists: ['Spring Readers'] });
    const listed = await notify.campaigns.create({ subject: 'Spring', html: '<p>Hi</p>', list: 'Spring Readers' });
    await notify.campaigns.send(listed.id);
    const everyone = await notify.campaigns.create({ subject: 'Everyone', html: '<p>Hi</p>' });
    await notify.campaigns.send(everyone.id);
    const seq = await notify.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Welcome', html: '<p>Hi</p>' }] });
    await notify.drips.enroll({ contact: 'ann@example.com', sequence: 'welcome' });
    await notify.drips.process();
    await notify.send({ to: 'bob@example.com', subject: 'Receipt', text: 'Thanks', headers: { 'X-Mine': '1' } });

    const by = (subject: string) => sink.messages.find((m) => m.parsed.subject === subject)!;
    assert.equal(header(by('Spring'), 'List-Id'), '<spring-readers.news.example>');
    assert.equal(header(by('Spring'), 'Feedback-ID'), `${listed.id}:spring-readers:campaign:acme`);
    assert.equal(header(by('Everyone'), 'List-Id'), undefined);
    assert.equal(header(by('Everyone'), 'Feedback-ID'), `${everyone.id}::campaign:acme`);
    assert.equal(header(by('Welcome'), 'Feedback-ID'), `${seq.id}::drip:acme`);
    assert.equal(header(by('Receipt'), 'Feedback-ID'), '::send:acme');
    assert.equal(header(by('Receipt'), 'X-Mine'), '1');
    for (const m of sink.messages) assert.equal(m.ehlo, 'mta.news.example');
  });
});
