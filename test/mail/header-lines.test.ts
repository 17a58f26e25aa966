// Every header line of every kind of message within 78 characters (RFC 5322 2.1.1), checked on the
// bytes a real SMTP server received and read back by mailparser (a parser notify did not write).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type ParsedMail, simpleParser } from 'mailparser';
import { FROM_ADDRESS_MAX, LIST_ID_DOMAIN_MAX, MESSAGE_ID_DOMAIN_MAX } from '../../src/core/header-limits.ts';
import { feedbackIdProblem, listHeaders, listUnsubscribeHeaders, MAX_FOLDABLE_HOST } from '../../src/core/list-headers.ts';
import { sendUnsubscribeToken } from '../../src/core/tokens.ts';
import { headerField } from '../../src/mail/header-fold.ts';
import { asciiDomain } from '../../src/mail/address.ts';
import { composeMime } from '../../src/mail/mime.ts';
import { formatAddress } from '../../src/mail/encoding.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { capture } from '../capture/helpers.ts';
import { dkimKey, mailauthSign, verifyDkim } from '../helpers/dkim.ts';
import { domainOfLength } from '../helpers/domains.ts';
import { createDkimSigner } from '../../src/mail/dkim.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { pythonRead } from './python-read.ts';

/** The header lines over 78 characters: none may be. */
function longLines(raw: Buffer): string[] {
  const head = raw.toString('utf8').split('\r\n\r\n')[0];
  return head.split('\r\n').filter((line) => line.length > 78);
}

/** a DNS label: 1 to 63 letters, digits and inner hyphens, sometimes punycode */
const label = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/) },
  { weight: 1, arbitrary: fc.constantFrom('xn--bcher-kva', 'x'.repeat(63), 'xn--zrich-bcher-strae-caf-gre-bbci0zzsgat') },
);
/** a domain of 1 to 4 labels and a top-level one, up to ~270 characters */
const domain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 4 }), fc.constantFrom('com', 'example', 'co.uk', 'de', 'news'))
  .map(([labels, tld]) => `${labels.join('.')}.${tld}`);
/** tracking hosts, short and long (labels up to 63, beyond 100 characters): http(s), maybe a port and a path */
const host = fc
  .tuple(fc.constantFrom('https://', 'http://'), domain, fc.option(fc.constantFrom(':8080', ':443'), { nil: '' }), fc.option(fc.constantFrom('/mail', '/app/notify', '/n'), { nil: '' }))
  .map(([scheme, name, port, path]) => `${scheme}${name}${port}${path}`);
/** what the options and formatFrom take: a List-Id domain, a From address, a Feedback-ID template */
const listIdDomain = domain.filter((d) => d.length <= LIST_ID_DOMAIN_MAX);
const fromAddress = fc
  .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,40}$/), domain)
  .map(([local, name]) => `${local}@${name}`)
  .filter((a) => a.length <= FROM_ADDRESS_MAX && a.length - a.lastIndexOf('@') - 1 <= MESSAGE_ID_DOMAIN_MAX);
const feedbackId = fc
  .tuple(fc.constantFrom('{id}:{list}:{kind}:', '{list}:{kind}:', '{kind}:{id}:', '{list}.{list}:'), fc.stringMatching(/^[A-Za-z0-9._-]{1,70}$/))
  .map(([head, sender]) => `${head}${sender}`)
  .filter((t) => feedbackIdProblem(t) === undefined);

/** printable text a subject or name may hold (no line breaks, no Liquid braces), trimmed */
const text = (max: number) =>
  fc
    .fullUnicodeString({ minLength: 1, maxLength: max })
    .map((s) => s.replace(/[\u0000-\u001f\u007f{}%]/g, ' ').trim())
    .filter((s) => s.length > 0);

const listUnsubscribe = (m: ParsedMail) => (m.headers.get('list') as { unsubscribe?: { url?: string } } | undefined)?.unsubscribe?.url;
const listId = (m: ParsedMail) => (m.headers.get('list') as { id?: { id?: string; name?: string } } | undefined)?.id;

describe('header folding', () => {
  test('property: random unicode subjects and names, hosts and domains up to 63-character labels: within 78, read back by mailparser, Python and mailauth', async () => {
    const made: { raw: Buffer; subject: string; name: string; url: string; messageId: string; headers: Record<string, string> }[] = [];
    const key = dkimKey('ed25519');
    const sign = createDkimSigner({ domainName: 'news.example', keySelector: 'p', privateKey: key.privateKey });
    await fc.assert(
      fc.asyncProperty(
        fc.record({ subject: text(300), name: text(120), list: text(120), base: host, from: fromAddress, listIdDomain, feedbackId, sendId: fc.integer({ min: 1, max: 2 ** 40 - 1 }) }),
        async ({ subject, name, list, base, from, listIdDomain, feedbackId, sendId }) => {
          const unsubscribe = listUnsubscribeHeaders(base, 'secret', sendId, 'unused');
          const headers: Record<string, string> = { 'X-Note': subject /* folded like Subject; mailparser leaves unknown headers encoded */, ...listHeaders({ listIdDomain, feedbackId }, { kind: 'campaign', id: sendId, list }), ...unsubscribe };
          const messageId = `<${'T'.repeat(22)}@${from.slice(from.indexOf('@') + 1)}>`;
          const raw = sign(composeMime({ from: formatAddress(from, name), to: ['a@example.com'], subject, date: 0, messageId, headers }, 'text', undefined), 0);
          const url = `${base}/notify/u/${sendUnsubscribeToken('secret', sendId)}`;
          // no exemption: a URL longer than a line is folded inside its angle brackets
          assert.deepEqual(longLines(raw), []);
          const parsed = await simpleParser(raw);
          assert.equal(parsed.subject, subject);
          assert.equal(parsed.from?.value[0].name, name);
          assert.equal(asciiDomain(String(parsed.from?.value[0].address)), from, 'mailparser shows the punycode domain as unicode');
          assert.equal(parsed.messageId, messageId);
          // mailparser unfolds but keeps the white space of a fold inside the brackets; a reader drops it (RFC 2369 2)
          assert.equal(listUnsubscribe(parsed)?.replace(/\s+/g, ''), url);
          assert.equal(listUnsubscribe(parsed) === url, base.length <= MAX_FOLDABLE_HOST, 'folded inside the brackets only when the line would pass 78');
          assert.equal(listId(parsed)?.name, headers['List-Id'].slice(1, -1));
          assert.equal(parsed.headers.get('feedback-id'), headers['Feedback-ID']);
          made.push({ raw, subject, name, url, messageId, headers });
        },
      ),
      { numRuns: 300 },
    );
    // mailauth (relaxed canonicalisation unfolds each line) verifies a sample, both unsubscribe headers
    // signed, most of it with the URL folded inside its brackets; and its own simple/simple signature
    // (the header lines byte for byte, folds included; every line notify may fold signed) over the same messages
    const folded = made.filter((m) => m.url.length + 3 > 78);
    const sample = [...folded.slice(0, 20), ...made.filter((m) => !folded.includes(m)).slice(0, 5)];
    assert.ok(folded.length >= 20, `${folded.length} folded URLs in 300 runs`);
    for (const m of sample) {
      const [check] = await verifyDkim(m.raw, { 'p._domainkey.news.example': key.record });
      assert.equal(check.result, 'pass', check.comment);
      assert.ok(check.signed.includes('list-unsubscribe') && check.signed.includes('list-unsubscribe-post'), check.signed.join(':'));
      const simple = await mailauthSign(m.raw, { domainName: 'simple.example', keySelector: 'q', privateKey: key.privateKey, canonicalization: 'simple/simple', headerList: ['from', 'to', 'subject', 'x-note', 'message-id', 'list-id', 'feedback-id', 'list-unsubscribe', 'list-unsubscribe-post'] });
      const checks = await verifyDkim(simple, { 'p._domainkey.news.example': key.record, 'q._domainkey.simple.example': key.record });
      // mailauthSign gives mailauth its sign time: without it mailauth's t= could change between signing
      // and writing when a half second passed in between (failed "bad signature" in loaded full runs;
      // dkim-sign-time.test.ts has that message); the header block is kept in the message should it fail
      assert.deepEqual(checks.map((c) => [c.domain, c.result]), [['simple.example', 'pass'], ['news.example', 'pass']], `${checks.map((c) => c.comment).join('; ')}\n${simple.toString('utf8').split('\r\n\r\n')[0]}`);
    }
    const python = pythonRead(
      made.map((m) => m.raw),
      ['subject', 'list-unsubscribe', 'list-id', 'message-id', 'feedback-id'],
    );
    if (!python) return;
    // Python keeps the white space of a fold right after the colon in an unstructured value, and its
    // address parser (3.11) keeps the white space between two encoded words of a display name, which
    // RFC 2047 6.2 says to drop: the name's white space is left to mailparser, checked above.
    const noSpace = (s: string) => s.replace(/\s+/g, '');
    assert.deepEqual(
      python.map((p) => ({ name: noSpace(p.name), ...Object.fromEntries(Object.entries(p.headers).map(([k, v]) => [k, k === 'list-unsubscribe' ? noSpace(v) : v.trimStart()])) })),
      made.map((m) => ({
        name: noSpace(m.name),
        subject: m.subject,
        'list-unsubscribe': `<${m.url}>`,
        'list-id': m.headers['List-Id'],
        'message-id': m.messageId,
        'feedback-id': m.headers['Feedback-ID'],
      })),
    );
  });

  test(`a host of ${MAX_FOLDABLE_HOST} characters keeps the URL whole on its line; a longer one folds inside the brackets, before the token while the rest fits`, async () => {
    const at = (length: number) => `https://${'h'.repeat(length - 'https://'.length - '.example'.length)}.example`;
    const token = sendUnsubscribeToken('secret', 2 ** 40 - 1);
    const lines = (base: string) => headerField('List-Unsubscribe', listUnsubscribeHeaders(base, 'secret', 2 ** 40 - 1, 'unused')['List-Unsubscribe']).split('\r\n');
    assert.equal(at(MAX_FOLDABLE_HOST).length, 41);
    assert.deepEqual(lines(at(MAX_FOLDABLE_HOST)), ['List-Unsubscribe:', ` <${at(41)}/notify/u/${token}>`]);
    assert.deepEqual(lines(at(MAX_FOLDABLE_HOST + 1)), ['List-Unsubscribe:', ` <${at(42)}/notify/u/`, ` ${token}>`]);
    assert.deepEqual(lines(at(66)), ['List-Unsubscribe:', ` <${at(66)}/notify/u/`, ` ${token}>`]);
    assert.deepEqual(lines(at(67)), ['List-Unsubscribe:', ` <${at(67)}/notify/`, ` u/${token}>`]);
    // the longest host the configuration takes (900): every line within 78, broken after dots and slashes
    const longest = lines(at(900));
    assert.ok(longest.every((l) => l.length <= 78), JSON.stringify(longest));
    assert.equal(longest.slice(1).join('').replace(/ /g, ''), `<${at(900)}/notify/u/${token}>`);
    const raw = composeMime({ from: 'a@news.example', to: ['b@example.com'], subject: 's', date: 0, messageId: '<x@news.example>', headers: listUnsubscribeHeaders(at(900), 'secret', 7, 'unused') }, 't', undefined);
    assert.deepEqual(longLines(raw), []);
    const url = `${at(900)}/notify/u/${sendUnsubscribeToken('secret', 7)}`;
    // both parsers unfold (CRLF removed, the space kept); RFC 2369's reader then drops the white space
    assert.equal(listUnsubscribe(await simpleParser(raw))?.replace(/\s/g, ''), url);
    const python = pythonRead([raw], ['list-unsubscribe']);
    if (python) assert.equal(python[0].headers['list-unsubscribe'].replace(/\s/g, ''), `<${url}>`);
  });

  test('a long List-Unsubscribe URL never breaks after a hyphen (RFC 3986 C), nor inside ://', () => {
    const base = `https://${'ab-'.repeat(40)}x.example`;
    const field = headerField('List-Unsubscribe', `<${base}/notify/u/${'A'.repeat(24)}>`);
    const lines = field.split('\r\n');
    assert.ok(lines.every((l) => l.length <= 78));
    for (const l of lines.slice(0, -1)) assert.doesNotMatch(l, /-$/, l);
    assert.doesNotMatch(field, /https:\/?\r\n/);
    assert.equal(lines.slice(1).join('').replace(/ /g, ''), `<${base}/notify/u/${'A'.repeat(24)}>`);
  });

  test('List-Unsubscribe with two long URLs folds between them; each URL reads back whole', async () => {
    const web = `https://mail.news.example/notify/u/${'A'.repeat(28)}`;
    const mail = `mailto:unsubscribe+${'C'.repeat(20)}@news.example?subject=unsubscribe`;
    const value = `<${web}>, <${mail}>`;
    const field = headerField('List-Unsubscribe', value);
    assert.equal(field, `List-Unsubscribe:\r\n <${web}>,\r\n <${mail}>`);
    assert.equal(field.replace(/\r\n/g, ''), `List-Unsubscribe: ${value}`, 'unfolding gives the value back');
    const raw = composeMime({ from: 'a@news.example', to: ['b@example.com'], subject: 's', date: 0, messageId: '<x@news.example>', headers: { 'List-Unsubscribe': value, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }, 't', undefined);
    assert.deepEqual(longLines(raw), []);
    const parsed = await simpleParser(raw);
    assert.equal(listUnsubscribe(parsed), web);
  });

  test('To: an address up to 74 on the first line, up to 77 on a line of its own; longer (valid to 254) whole on its own line, under 998, read back by mailparser and Python', async () => {
    const address = (n: number) => `${'r'.repeat(n - 1 - 'news.example'.length)}@news.example`;
    const toLines = (raw: Buffer) => raw.toString('utf8').split('\r\n\r\n')[0].match(/^To:.*(\r\n[ \t].*)*/m)![0].split('\r\n');
    const compose = (to: string[]) => composeMime({ from: 'a@news.example', to, subject: 's', date: 0, messageId: '<x@news.example>', headers: {} }, 't', undefined);
    assert.deepEqual(toLines(compose([address(74)])), [`To: ${address(74)}`]);
    for (const n of [75, 77]) assert.deepEqual(toLines(compose([address(n)])), ['To:', ` ${address(n)}`], String(n));
    const longest = `${'l'.repeat(64)}@${domainOfLength(189, 'd')}`;
    assert.equal(longest.length, 254);
    const raws = [78, 120].map((n) => compose([address(n)])).concat(compose([longest]), compose([address(20), longest, address(77)]));
    for (const raw of raws) {
      const lines = toLines(raw);
      assert.ok(lines.every((l) => l.length < 998));
      // only an address longer than a line passes 78, and then it is alone on its line
      for (const l of lines.filter((x) => x.length > 78)) assert.match(l, /^ [^ ,]+,?$/);
    }
    const expected = [[address(78)], [address(120)], [longest], [address(20), longest, address(77)]];
    assert.deepEqual(
      await Promise.all(raws.map(async (r) => ((await simpleParser(r)).to as { value: { address: string }[] }).value.map((v) => v.address))),
      expected,
    );
    const python = pythonRead(raws, ['to']);
    if (python) assert.deepEqual(python.map((p) => p.headers.to.split(',').map((a) => a.trim())), expected);
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
        baseUrl: 'https://mail.news-example.co.uk/n',
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

  test('a send to an address of 253 characters reaches the SMTP server; its To line is under 998 and reads back', async () => {
    // 253: smtp-server refuses a 254-character RCPT TO (501, its reading of RFC 5321 4.5.3.1.3), which
    // notify takes (RFC 3696 erratum 1690) and Postfix 3.7 accepts as syntax
    const to = `${'l'.repeat(64)}@${domainOfLength(188, 'e')}`;
    const before = sink.messages.length;
    const record = await notify.send({ to, subject: 'Long address', text: 'x' });
    assert.equal(record.status, 'sent', JSON.stringify(record));
    await sink.waitFor(before + 1, 10_000);
    const m = sink.messages.find((x) => x.envelope.to.includes(to))!;
    const head = m.raw.toString('utf8').split('\r\n\r\n')[0];
    assert.deepEqual(longLines(m.raw), [` ${to}`]);
    assert.ok(head.split('\r\n').every((l) => l.length < 998));
    assert.equal((m.parsed.to as { value: { address: string }[] }).value[0].address, to);
  });

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
    assert.match(String(listUnsubscribe(first.parsed)), /^https:\/\/mail\.news-example\.co\.uk\/n\/notify\/u\/[A-Za-z0-9_-]{24}$/);
    assert.match(first.raw.toString('latin1'), /^List-Id:(\r\n)? <spring-readers-of-the-long-weekly-newsletter\.lists\.news\.example>/m);
  });
});
