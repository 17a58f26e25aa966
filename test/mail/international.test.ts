// International addresses over real SMTP servers: domains as punycode in headers and envelope, a
// non-ASCII local part only where the server offers SMTPUTF8, else a failed send that says why.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { asciiDomain, needsSmtpUtf8 } from '../../src/mail/address.ts';
import { createSesMailer } from '../../src/mail/ses.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

test('asciiDomain and needsSmtpUtf8', () => {
  assert.equal(asciiDomain('zoe@bücher.example'), 'zoe@xn--bcher-kva.example');
  assert.equal(asciiDomain('ZOE@Bücher.Example'), 'ZOE@xn--bcher-kva.example');
  assert.equal(asciiDomain('plain@example.com'), 'plain@example.com');
  assert.equal(asciiDomain('zoë@bücher.example'), 'zoë@xn--bcher-kva.example');
  assert.equal(needsSmtpUtf8('zoë@example.com'), true);
  assert.equal(needsSmtpUtf8('zoe@bücher.example'), false);
});

forEachEngine('international addresses', (h) => {
  let utf8Sink: SmtpSink;
  let asciiSink: SmtpSink;
  let notify: Notify;
  let strict: Notify;
  before(async () => {
    utf8Sink = await startSmtpSink();
    asciiSink = await startSmtpSink({ hideSmtpUtf8: true });
    notify = await createNotify(testOptions(h.url, { mailer: utf8Sink.url, fromName: 'Bücher', fromEmail: 'news@bücher.example' }));
    strict = await createNotify(testOptions(h.url, { mailer: asciiSink.url, fromEmail: 'news@example.com' }));
  });
  after(async () => {
    await notify?.close();
    await strict?.close();
    await utf8Sink?.close();
    await asciiSink?.close();
  });

  test('a non-ASCII domain is punycode in To, From, Message-ID and the envelope; the contact keeps what was typed', async () => {
    const rec = await notify.send({ to: 'zoe@bücher.example', subject: 'Hallo', text: 'x' });
    assert.equal(rec.status, 'sent');
    const m = utf8Sink.messages.at(-1)!;
    assert.deepEqual(utf8Sink.commands.slice(-2), ['MAIL FROM:<news@xn--bcher-kva.example>', 'RCPT TO:<zoe@xn--bcher-kva.example>']);
    assert.equal(m.smtpUtf8, false, 'nothing here needs SMTPUTF8');
    // the header bytes (mailparser shows punycode domains as Unicode again)
    const head = m.raw.toString('latin1').split('\r\n\r\n')[0];
    assert.match(head, /^To: zoe@xn--bcher-kva\.example$/m);
    assert.match(head, /^From: =\?UTF-8\?B\?[^?]+\?= <news@xn--bcher-kva\.example>$/m);
    assert.equal(m.parsed.from?.value[0].name, 'Bücher');
    assert.match(String(m.parsed.messageId), /@xn--bcher-kva\.example>$/);
    assert.doesNotMatch(m.raw.toString('latin1').split('\r\n\r\n')[0], /[\x80-\xff]/, 'the header block is 7-bit');
    assert.equal((await notify.contacts.get('zoe@bücher.example'))?.email, 'zoe@bücher.example');
  });

  test('a campaign to a contact with a non-ASCII domain reaches its punycode address', async () => {
    await notify.contacts.upsert({ email: 'ann@café.example', lists: ['intl'] });
    const c = await notify.campaigns.create({ subject: 'Spring', html: '<p>x</p>', list: 'intl' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 1);
    assert.ok(utf8Sink.commands.includes('RCPT TO:<ann@xn--caf-dma.example>'));
  });

  test('a non-ASCII local part goes out with SMTPUTF8 to a server that offers it', async () => {
    const rec = await notify.send({ to: 'zoë@bücher.example', subject: 'Grüße', text: 'x' });
    assert.equal(rec.status, 'sent');
    const m = utf8Sink.messages.at(-1)!;
    assert.deepEqual(utf8Sink.commands.slice(-2), ['MAIL FROM:<news@xn--bcher-kva.example> BODY=8BITMIME SMTPUTF8', 'RCPT TO:<zoë@xn--bcher-kva.example>']);
    assert.equal(m.smtpUtf8, true);
    assert.match(m.raw.toString('utf8'), /^To: zoë@xn--bcher-kva\.example\r$/m);
  });

  test('to a server without SMTPUTF8: a failed send row with SMTPUTF8_REQUIRED, nothing delivered; ASCII still goes', async () => {
    const rec = await strict.send({ to: 'zoë@example.com', subject: 'Grüße', text: 'x' });
    assert.equal(rec.status, 'failed');
    assert.match(String(rec.error), /^SMTPUTF8_REQUIRED: zoë@example\.com has a non-ASCII local part/);
    await strict.contacts.upsert({ email: 'jörg@example.com', lists: ['de'] });
    const c = await strict.campaigns.create({ subject: 'Hallo', html: '<p>x</p>', list: 'de' });
    const run = await strict.campaigns.send(c.id);
    assert.equal(run.failed, 1);
    assert.equal(asciiSink.messages.length, 0);
    assert.equal((await strict.send({ to: 'zoe@bücher.example', subject: 'ok', text: 'x' })).status, 'sent');
    assert.equal(asciiSink.commands.at(-1), 'RCPT TO:<zoe@xn--bcher-kva.example>');
  });
});

test('SES: punycode destinations, the VERP address for feedback, SMTPUTF8_REQUIRED before any request', async () => {
  const bodies: Record<string, unknown>[] = [];
  const fakeFetch = (async (_url: URL, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    return new Response(JSON.stringify({ MessageId: 'ses-1' }), { status: 200 });
  }) as unknown as typeof fetch;
  const ses = createSesMailer({ region: 'eu-west-1', accessKeyId: 'AKID', secretAccessKey: 's', fetch: fakeFetch });
  const envelopeFrom = 'bounces+AAAAAAAAAAAAAAAAAAAAAA@bounce.news.example';
  await ses.send({ from: 'News <news@bücher.example>', to: ['zoe@bücher.example'], cc: ['cy@café.example'], subject: 'S', text: 'x', headers: {}, sendToken: 't', envelopeFrom });
  assert.equal(bodies[0].FromEmailAddress, 'news@xn--bcher-kva.example');
  assert.deepEqual((bodies[0].Destination as { ToAddresses: string[] }).ToAddresses, ['zoe@xn--bcher-kva.example']);
  assert.deepEqual((bodies[0].Destination as { CcAddresses: string[] }).CcAddresses, ['cy@xn--caf-dma.example']);
  assert.equal(bodies[0].FeedbackForwardingEmailAddress, envelopeFrom);
  await assert.rejects(ses.send({ from: 'news@example.com', to: ['zoë@example.com'], subject: 'S', text: 'x', headers: {}, sendToken: 't' }), (err: Error & { code?: string }) => err.code === 'SMTPUTF8_REQUIRED' && /Amazon SES/.test(err.message));
  assert.equal(bodies.length, 1, 'no request for the refused message');
});
