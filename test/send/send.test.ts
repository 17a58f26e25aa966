import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sendUnsubscribeToken } from '../../src/core/tokens.ts';
import { isNotifyError } from '../../src/errors.ts';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import type { SendInput } from '../../src/core/send.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const HOST = 'https://t.example.net';
const BODY = `<p>Hello {{ contact.name }}</p>
<a href="https://example.com/a?x=1&amp;y=2">one</a>
<a href='http://example.org/b'>two</a>
<a href=https://example.com/c>three</a>
<a HREF="HTTPS://EXAMPLE.COM/D">four</a>
<a href="mailto:help@example.com">mail</a>
<a href="tel:+4412345">call</a>
<a href="{notify_unsubscribe_url}">unsubscribe</a>
{notify_tracking_pixel}`;

const headerCount = (raw: Buffer, name: string) => raw.toString('latin1').split('\r\n\r\n')[0].split('\r\n').filter((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`)).length;
/** the field's value, unfolded */
const headerValue = (raw: Buffer, name: string) =>
  raw
    .toString('latin1')
    .split('\r\n\r\n')[0]
    .replace(/\r\n(?=[ \t])/g, '')
    .split('\r\n')
    .find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    ?.slice(name.length + 1)
    .trim();

forEachEngine('notify.send through a real SMTP sink', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, trackingHost: HOST, fromName: 'News' }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('pixel element, every http(s) link rewritten, unsubscribe/mailto/tel untouched, both headers exactly once', async () => {
    const ann = await notify.contacts.upsert({ email: 'ann@example.com', name: 'Ann' });
    const before = sink.messages.length;
    const rec = await notify.send({ to: 'ann@example.com', subject: 'Hello', html: BODY, layout: false });
    assert.equal(rec.status, 'sent');
    assert.match(rec.token, /^[A-Za-z0-9_-]{22}$/);
    await sink.waitFor(before + 1);
    const m = sink.messages[before];
    const html = m.parsed.html as string;
    assert.match(html, new RegExp(`<img src="${HOST}/notify/open/${rec.token}" width="1" height="1" alt="">`));
    const hrefs = [...html.matchAll(/href="([^"]*)"/gi)].map((x) => x[1]);
    const clicks = hrefs.filter((u) => u.startsWith(`${HOST}/notify/click/${rec.token}?l=m${rec.id}.`));
    assert.equal(clicks.length, 4, 'every http(s) link, in any case and quoting, is rewritten');
    assert.ok(!hrefs.some((u) => /^https?:\/\/example\./i.test(u)), 'no original destination left in the HTML');
    const unsubscribe = `${HOST}/notify/unsubscribe/${ann.unsubscribe_token}?s=${rec.token}`;
    assert.ok(hrefs.includes(unsubscribe), 'unsubscribe link is the plain unsubscribe URL');
    assert.ok(hrefs.includes('mailto:help@example.com') && hrefs.includes('tel:+4412345'));
    const stored = await notify.context.store.links.urlsForScope(`m${rec.id}`);
    assert.deepEqual(stored, ['https://example.com/a?x=1&y=2', 'http://example.org/b', 'https://example.com/c', 'HTTPS://EXAMPLE.COM/D']);
    assert.equal(headerCount(m.raw, 'List-Unsubscribe'), 1);
    assert.equal(headerCount(m.raw, 'List-Unsubscribe-Post'), 1);
    // the header carries the short one-click form, naming this send; the body keeps the long link
    assert.equal(headerValue(m.raw, 'List-Unsubscribe'), `<${HOST}/notify/u/${sendUnsubscribeToken(notify.context.secret, rec.id)}>`);
    assert.equal(headerValue(m.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    assert.match(m.parsed.text as string, new RegExp(`notify/click/${rec.token}\\?l=m${rec.id}\\.0\\.`), 'text part links are tracked too');
    assert.deepEqual(m.parsed.from?.value.map((a) => [a.name, a.address]), [['News', 'news@example.com']]);
    assert.match(html, /Hello Ann/);
  });

  test('a caller-set List-Unsubscribe is left unchanged and no Post header is added', async () => {
    const before = sink.messages.length;
    const own = '<mailto:unsub@example.com?subject=stop>';
    await notify.send({ to: 'own@example.com', subject: 'Own', html: '<p>x</p>', headers: { 'List-Unsubscribe': own, 'X-Campaign': 'spring' } });
    await sink.waitFor(before + 1);
    const m = sink.messages[before];
    assert.equal(headerCount(m.raw, 'List-Unsubscribe'), 1);
    assert.equal(headerValue(m.raw, 'List-Unsubscribe'), own);
    assert.equal(headerCount(m.raw, 'List-Unsubscribe-Post'), 0);
    assert.equal(headerValue(m.raw, 'X-Campaign'), 'spring');
  });

  test('a multi-recipient send gets no List-Unsubscribe and an empty unsubscribe link', async () => {
    const before = sink.messages.length;
    await notify.send({ to: ['m1@example.com', 'm2@example.com'], cc: 'm3@example.com', bcc: 'm4@example.com', subject: 'Many', html: '<a href="{notify_unsubscribe_url}">u</a>' });
    await sink.waitFor(before + 1);
    const m = sink.messages[before];
    assert.deepEqual(m.envelope.to.sort(), ['m1@example.com', 'm2@example.com', 'm3@example.com', 'm4@example.com']);
    assert.equal(headerCount(m.raw, 'List-Unsubscribe'), 0);
    assert.equal(headerCount(m.raw, 'Bcc'), 0, 'Bcc never appears in the message');
  });

  test('CR/LF in subject, from name, from address, header values or addresses is refused and nothing is sent or stored', async () => {
    const before = sink.messages.length;
    const base = { to: 'crlf@example.com', subject: 'ok', html: '<p>x</p>' };
    const bad: SendInput[] = [
      { ...base, subject: 'Hi\r\nBcc: evil@example.com' },
      { ...base, subject: 'Hi\nthere' },
      { ...base, fromName: 'News\r\nBcc: evil@example.com' },
      { ...base, fromEmail: 'news@example.com\r\nBcc: evil@example.com' },
      { ...base, headers: { 'X-Tag': 'a\r\nBcc: evil@example.com' } },
      { ...base, headers: { 'X-Tag\r\nBcc': 'a' } },
      { ...base, to: 'crlf@example.com\r\nBcc: evil@example.com' },
      { ...base, cc: 'x@example.com\nBcc: evil@example.com' },
    ];
    for (const input of bad) {
      await assert.rejects(notify.send(input), (e) => isNotifyError(e, 'HEADER_INJECTION'), JSON.stringify(input));
    }
    const invalid: SendInput[] = [{ ...base, headers: { Bcc: 'evil@example.com' } }, { ...base, headers: { 'Bad Name': 'x' } }, { ...base, to: 'not-an-address' }];
    for (const input of invalid) {
      await assert.rejects(notify.send(input), (e) => isNotifyError(e, 'INVALID_INPUT') || isNotifyError(e, 'INVALID_EMAIL'), JSON.stringify(input));
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sink.messages.length, before);
    assert.equal(await notify.contacts.get('crlf@example.com'), undefined, 'nothing stored for a refused message');
  });

  test('a per-recipient subject that renders a line break fails that send, never sends it', async () => {
    await notify.contacts.upsert({ email: 'evil@example.com', attributes: { title: 'x\r\nBcc: victim@example.com' } });
    const before = sink.messages.length;
    const rec = await notify.send({ to: 'evil@example.com', subject: 'Hi {{ contact.attributes.title }}', html: '<p>x</p>' });
    assert.equal(rec.status, 'failed');
    assert.match(rec.error ?? '', /HEADER_INJECTION/);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sink.messages.length, before);
  });

  test('suppressed recipients are dropped; all dropped -> record suppressed and nothing received', async () => {
    for (const [email, status] of [
      ['u@example.com', 'unsubscribed'],
      ['b@example.com', 'bounced'],
      ['c@example.com', 'complained'],
    ] as const) {
      await notify.contacts.upsert({ email, status });
    }
    const before = sink.messages.length;
    const rec = await notify.send({ to: 'u@example.com', cc: 'b@example.com', bcc: 'c@example.com', subject: 'x', html: '<p>x</p>' });
    assert.equal(rec.status, 'suppressed');
    const partial = await notify.send({ to: ['U@example.com', 'live@example.com'], bcc: 'c@example.com', subject: 'y', html: '<p>y</p>' });
    assert.equal(partial.status, 'sent');
    await sink.waitFor(before + 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sink.messages.length, before + 1);
    assert.deepEqual(sink.messages[before].envelope.to, ['live@example.com']);
  });

  test('markdown and markdownFile paths that escape markdownPath are errors', async () => {
    for (const file of ['../../etc/passwd', '/etc/passwd', 'a\0b.md']) {
      await assert.rejects(notify.send({ to: 'md@example.com', subject: 'x', markdownFile: file }), (e) => isNotifyError(e, 'PATH_ESCAPE'), file);
    }
    await assert.rejects(notify.send({ to: 'md@example.com', subject: 'x', markdownFile: 'nope.md' }), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.send({ to: 'md@example.com', subject: 'x', html: '<p>x</p>', markdown: '# x' }), (e) => isNotifyError(e, 'INVALID_INPUT'));
  });
});

forEachEngine('mailer outcomes and testMode', (h) => {
  const sent: OutgoingMessage[] = [];
  let mode: 'ok' | 'false' | 'throw' = 'ok';
  const mailer: Mailer = {
    name: 'test',
    async send(m) {
      if (mode === 'false') return false;
      if (mode === 'throw') throw new Error('provider down');
      sent.push(m);
      return { messageId: 'provider-1' };
    },
  };
  const notify = useNotify(h, { mailer });

  test('any object implementing the contract is a mailer; false or a throw is a failed send', async () => {
    const ok = await notify().send({ to: 'obj@example.com', subject: 'Obj', html: '<p>Hi <a href="https://example.com">x</a></p>', text: 'Plain https://example.com' });
    assert.equal(ok.status, 'sent');
    assert.equal(ok.message_id, 'provider-1');
    assert.match(sent[0].html ?? '', /notify\/click\//);
    assert.match(sent[0].text ?? '', /^Plain http:\/\/localhost:3000\/notify\/click\//);
    assert.ok(sent[0].raw && sent[0].raw.length > 0);
    mode = 'false';
    const f = await notify().send({ to: 'obj@example.com', subject: 'Obj', html: '<p>x</p>' });
    assert.equal(f.status, 'failed');
    assert.match(f.error ?? '', /false/);
    mode = 'throw';
    const t = await notify().send({ to: 'obj@example.com', subject: 'Obj', html: '<p>x</p>' });
    assert.equal(t.status, 'failed');
    assert.match(t.error ?? '', /provider down/);
  });
});

forEachEngine('testMode', (h) => {
  const { logger, lines } = recordingLogger();
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify({ ...testOptions(h.url, { mailer: sink.url, testMode: true, batchSize: 10 }), logger });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('testMode delivers nothing and logs each send with recipients, subject and token', async () => {
    for (let i = 0; i < 3; i++) await notify.contacts.upsert({ email: `tm${i}@example.com`, lists: ['tm'] });
    const c = await notify.campaigns.create({ subject: 'Test mode', html: '<p>x</p>', list: 'tm' });
    const run = await notify.campaigns.send(c.id);
    assert.deepEqual([run.sent, run.dryRun], [0, 3], 'a dry run: nothing sent or stored, each message logged');
    const one = await notify.send({ to: 'tm9@example.com', subject: 'One', text: 'hi' });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sink.messages.length, 0);
    const logged = lines.filter((l) => l.msg === 'would send (not delivered)');
    assert.equal(logged.length, 4);
    assert.deepEqual(logged[3].to, ['tm9@example.com']);
    assert.equal(logged[3].subject, 'One');
    assert.equal(logged[3].sendToken, one.token);
  });
});
