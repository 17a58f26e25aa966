// Every header line of every kind of message within 78 characters (RFC 5322 2.1.1), checked on the
// bytes a real SMTP server received and read back by mailparser (a parser notify did not write).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type ParsedMail, simpleParser } from 'mailparser';
import { headerField } from '../../src/mail/header-fold.ts';
import { composeMime } from '../../src/mail/mime.ts';
import { formatAddress } from '../../src/mail/encoding.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { capture } from '../capture/helpers.ts';
import { dkimKey } from '../helpers/dkim.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * The header lines over 78 characters: none, except a line that holds one whole token with no
 * white space to fold at (a URL in List-Unsubscribe longer than a line, kept whole on
 * purpose: see src/mail/header-fold.ts).
 */
function longLines(raw: Buffer): string[] {
  const head = raw.toString('utf8').split('\r\n\r\n')[0];
  return head.split('\r\n').filter((line) => line.length > 78 && !/^(List-Unsubscribe:)? <[^\s<>]+>,?$/.test(line));
}

/** printable text a subject or name may hold (no line breaks, no Liquid braces), trimmed */
const text = (max: number) =>
  fc
    .fullUnicodeString({ minLength: 1, maxLength: max })
    .map((s) => s.replace(/[\u0000-\u001f\u007f{}%]/g, ' ').trim())
    .filter((s) => s.length > 0);

const listUnsubscribe = (m: ParsedMail) => (m.headers.get('list') as { unsubscribe?: { url?: string } } | undefined)?.unsubscribe?.url;

describe('header folding', () => {
  test('property: random unicode subjects and display names fold within 78 and read back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(text(300), text(120), async (subject, name) => {
        const raw = composeMime({ from: formatAddress('news@example.com', name), to: ['a@example.com'], subject, date: 0, messageId: '<x@example.com>', headers: { 'X-Note': subject } } /* folded like Subject; mailparser leaves unknown headers encoded */, 'text', undefined);
        assert.deepEqual(longLines(raw), []);
        const parsed = await simpleParser(raw);
        assert.equal(parsed.subject, subject);
        assert.equal(parsed.from?.value[0].name, name);
        assert.equal(parsed.from?.value[0].address, 'news@example.com');
      }),
      { numRuns: 300 },
    );
  });

  test('List-Unsubscribe with two long URLs folds between them; each URL reads back whole', async () => {
    const web = `https://mail.news.example/notify/unsubscribe/${'A'.repeat(22)}?s=${'B'.repeat(22)}`;
    const mail = `mailto:unsubscribe+${'C'.repeat(40)}@news.example?subject=unsubscribe`;
    const value = `<${mail}>, <${web}>`;
    const field = headerField('List-Unsubscribe', value);
    assert.ok(field.includes(',\r\n <https://'), field);
    assert.equal(field.replace(/\r\n/g, ''), `List-Unsubscribe: ${value}`, 'unfolding gives the value back');
    const raw = composeMime({ from: 'a@news.example', to: ['b@example.com'], subject: 's', date: 0, messageId: '<x@news.example>', headers: { 'List-Unsubscribe': value, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }, 't', undefined);
    assert.deepEqual(longLines(raw), []);
    const parsed = await simpleParser(raw);
    assert.equal(listUnsubscribe(parsed), web);
  });

  test('a long List-Id goes to a line of its own after the colon', () => {
    const value = `<${'x'.repeat(50)}.lists.news.example>`;
    const field = headerField('List-Id', value);
    assert.equal(field, `List-Id:\r\n ${value}`);
  });

  test('a long ASCII subject folds at spaces; a word too long for a line is encoded instead', async () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    assert.ok(headerField('Subject', words).split('\r\n').every((l) => l.length <= 78));
    assert.equal(headerField('Subject', words).replace(/\r\n/g, ''), `Subject: ${words}`);
    const long = `see https://shop.example/${'p'.repeat(90)}`;
    const raw = composeMime({ from: 'a@example.com', to: ['b@example.com'], subject: long, date: 0, messageId: '<x@example.com>', headers: {} }, 't', undefined);
    assert.deepEqual(longLines(raw), []);
    assert.equal((await simpleParser(raw)).subject, long);
  });
});

forEachEngine('header lines of every kind of message', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const SUBJECT = 'Grüße aus Zürich — 🌸 Frühlingsangebote für alle Leserinnen und Leser, nur diese Woche: bis zu 50 % Rabatt';
  const NAME = 'Ünïcödé Néws Dëpärtmënt — Frühling Ausgabe mit einem sehr langen Namen';
  before(async () => {
    sink = await startSmtpSink();
    const key = dkimKey();
    notify = await createNotify(
      testOptions(h.url, {
        mailer: sink.url,
        baseUrl: 'https://a-rather-long-tracking-host.mail.news.example',
        fromName: NAME,
        fromEmail: 'news@news.example',
        listIdDomain: 'lists.news.example',
        feedbackId: '{id}:{list}:{kind}:news-example',
        dkim: { domainName: 'news.example', keySelector: 's2026', privateKey: key.privateKey },
        doubleOptIn: true,
        captureRateLimit: 0,
        captureLists: ['Spring Readers Of The Long Weekly Newsletter'],
      }),
    );
  });
  after(async () => {
    await notify?.close();
    await sink?.close();
  });

  const check = async (m: SinkMessage, subject: string) => {
    assert.deepEqual(longLines(m.raw), [], `${subject}: header lines over 78`);
    assert.equal(m.parsed.subject, subject);
  };

  test('campaign, drip step, send, test copy and double opt-in', async () => {
    const list = 'Spring Readers Of The Long Weekly Newsletter';
    await notify.lists.create({ name: list });
    await notify.contacts.upsert({ email: 'ann@example.com', name: 'Ann', lists: [list] });
    const campaign = await notify.campaigns.create({ subject: SUBJECT, html: '<p>Hi</p>', list });
    await notify.campaigns.send(campaign.id);
    await notify.campaigns.sendTest(campaign.id, { to: ['tester@example.com'] });
    await notify.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 0, subject: `${SUBJECT} (drip)`, markdown: 'Hello' }] });
    await notify.drips.enroll({ contact: 'ann@example.com', sequence: 'welcome' });
    await notify.drips.process();
    await notify.send({ to: 'bob@example.com', cc: ['c1@example.com', 'c2@example.com', 'c3@example.com', 'c4@example.com', 'c5@example.com'], subject: `${SUBJECT} (send)`, text: 'x' });
    const res = await capture(notify, new URLSearchParams({ email: 'cy@example.com', list }).toString(), { accept: 'application/json' });
    assert.equal(res.status, 200);
    await sink.waitFor(5, 10_000);

    const by = (address: string) => sink.messages.find((m) => m.envelope.to.includes(address))!;
    await check(by('tester@example.com'), SUBJECT);
    await check(by('bob@example.com'), `${SUBJECT} (send)`);
    const optin = by('cy@example.com');
    assert.deepEqual(longLines(optin.raw), []);
    const [first, second] = sink.messages.filter((m) => m.envelope.to.includes('ann@example.com'));
    await check(first, SUBJECT);
    await check(second, `${SUBJECT} (drip)`);
    for (const m of sink.messages) assert.equal(m.parsed.from?.value[0].name, NAME);
    // the campaign's List-Unsubscribe URL reads back whole, and List-Id names the list
    assert.match(String(listUnsubscribe(first.parsed)), /^https:\/\/a-rather-long-tracking-host\.mail\.news\.example\/notify\/unsubscribe\/[A-Za-z0-9_-]{22}\?s=[A-Za-z0-9_-]{22}$/);
    assert.match(first.raw.toString('latin1'), /^List-Id:(\r\n)? <spring-readers-of-the-long-weekly-newsletter\.lists\.news\.example>/m);
  });
});
