// Every header line of every kind of message within 78 characters (RFC 5322 2.1.1), checked on the
// bytes a real SMTP server received and read back by mailparser (a parser notify did not write).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type ParsedMail, simpleParser } from 'mailparser';
import { listHeaders, listUnsubscribeHeaders, MAX_FOLDABLE_HOST } from '../../src/core/list-headers.ts';
import { sendUnsubscribeToken } from '../../src/core/tokens.ts';
import { headerField } from '../../src/mail/header-fold.ts';
import { composeMime } from '../../src/mail/mime.ts';
import { formatAddress } from '../../src/mail/encoding.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { capture } from '../capture/helpers.ts';
import { dkimKey } from '../helpers/dkim.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/** The header lines over 78 characters: none may be. */
function longLines(raw: Buffer): string[] {
  const head = raw.toString('utf8').split('\r\n\r\n')[0];
  return head.split('\r\n').filter((line) => line.length > 78);
}

/**
 * Python's email package (policy.default) reads each message: its Subject, the From display name
 * and the List-Unsubscribe value, unfolded. Undefined when there is no python3 on the machine.
 */
function pythonRead(raws: Buffer[]): { subject: string; name: string; unsubscribe: string }[] | undefined {
  const script = [
    'import sys, json, base64, email, email.policy',
    'out = []',
    'for b in json.load(sys.stdin):',
    '    m = email.message_from_bytes(base64.b64decode(b), policy=email.policy.default)',
    "    out.append({'subject': str(m['subject']), 'name': m['from'].addresses[0].display_name, 'unsubscribe': str(m['list-unsubscribe'])})",
    'print(json.dumps(out))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(raws.map((b) => b.toString('base64'))), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** tracking hosts people configure: http(s), a few DNS labels (some punycode), maybe a port and a path */
const host = fc
  .tuple(
    fc.constantFrom('https://', 'http://'),
    fc.array(fc.oneof(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/), fc.constant('xn--bcher-kva')), { minLength: 1, maxLength: 3 }),
    fc.constantFrom('com', 'example', 'co.uk', 'de', 'news'),
    fc.option(fc.constantFrom(':8080', ':443'), { nil: '' }),
    fc.option(fc.constantFrom('/mail', '/app/notify', '/n'), { nil: '' }),
  )
  .map(([scheme, labels, tld, port, path]) => `${scheme}${labels.join('.')}.${tld}${port}${path}`)
  .filter((h) => h.length <= MAX_FOLDABLE_HOST);

/** printable text a subject or name may hold (no line breaks, no Liquid braces), trimmed */
const text = (max: number) =>
  fc
    .fullUnicodeString({ minLength: 1, maxLength: max })
    .map((s) => s.replace(/[\u0000-\u001f\u007f{}%]/g, ' ').trim())
    .filter((s) => s.length > 0);

const listUnsubscribe = (m: ParsedMail) => (m.headers.get('list') as { unsubscribe?: { url?: string } } | undefined)?.unsubscribe?.url;

describe('header folding', () => {
  test('property: random unicode subjects and display names, realistic hosts: within 78, read back exactly by mailparser and Python', async () => {
    const made: { raw: Buffer; subject: string; name: string; url: string }[] = [];
    await fc.assert(
      fc.asyncProperty(text(300), text(120), host, fc.integer({ min: 1, max: 2 ** 40 - 1 }), async (subject, name, base, sendId) => {
        const unsubscribe = listUnsubscribeHeaders(base, 'secret', sendId, 'unused');
        const headers = { 'X-Note': subject /* folded like Subject; mailparser leaves unknown headers encoded */, ...listHeaders({ listIdDomain: 'lists.news.example', feedbackId: '{id}:{list}:{kind}:news' }, { kind: 'campaign', id: sendId, list: name }), ...unsubscribe };
        const raw = composeMime({ from: formatAddress('news@example.com', name), to: ['a@example.com'], subject, date: 0, messageId: '<x@example.com>', headers }, 'text', undefined);
        assert.deepEqual(longLines(raw), []);
        const parsed = await simpleParser(raw);
        assert.equal(parsed.subject, subject);
        assert.equal(parsed.from?.value[0].name, name);
        assert.equal(parsed.from?.value[0].address, 'news@example.com');
        const url = `${base}/notify/u/${sendUnsubscribeToken('secret', sendId)}`;
        assert.equal(listUnsubscribe(parsed), url);
        made.push({ raw, subject, name, url });
      }),
      { numRuns: 300 },
    );
    const python = pythonRead(made.map((m) => m.raw));
    if (!python) return;
    // Python keeps the white space of a fold right after the colon in an unstructured value, and its
    // address parser (3.11) keeps the white space between two encoded words of a display name, which
    // RFC 2047 6.2 says to drop: the name's white space is left to mailparser, checked above.
    const noSpace = (s: string) => s.replace(/\s+/g, '');
    assert.deepEqual(
      python.map((p) => ({ subject: p.subject, name: noSpace(p.name), unsubscribe: p.unsubscribe.trimStart() })),
      made.map((m) => ({ subject: m.subject, name: noSpace(m.name), unsubscribe: `<${m.url}>` })),
    );
  });

  test(`a host of ${MAX_FOLDABLE_HOST} characters keeps List-Unsubscribe within 78; one more gives one line of 79, the URL whole`, async () => {
    const at = (length: number) => `https://${'h'.repeat(length - 'https://'.length - '.example'.length)}.example`;
    const lines = (base: string) => headerField('List-Unsubscribe', listUnsubscribeHeaders(base, 'secret', 2 ** 40 - 1, 'unused')['List-Unsubscribe']).split('\r\n');
    assert.equal(at(MAX_FOLDABLE_HOST).length, 37);
    assert.deepEqual(lines(at(MAX_FOLDABLE_HOST)).map((l) => l.length), ['List-Unsubscribe:'.length, 78]);
    assert.deepEqual(lines(at(MAX_FOLDABLE_HOST + 1)).map((l) => l.length), ['List-Unsubscribe:'.length, 79]);
    // the longest host the configuration takes still keeps the line under RFC 5322's 998
    const longest = lines(at(900));
    assert.equal(Math.max(...longest.map((l) => l.length)), 900 + 41);
    const raw = composeMime({ from: 'a@news.example', to: ['b@example.com'], subject: 's', date: 0, messageId: '<x@news.example>', headers: listUnsubscribeHeaders(at(900), 'secret', 7, 'unused') }, 't', undefined);
    assert.equal(listUnsubscribe(await simpleParser(raw)), `${at(900)}/notify/u/${sendUnsubscribeToken('secret', 7)}`);
    const python = pythonRead([raw]);
    if (python) assert.equal(python[0].unsubscribe.trimStart(), `<${at(900)}/notify/u/${sendUnsubscribeToken('secret', 7)}>`);
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
    assert.match(String(listUnsubscribe(first.parsed)), /^https:\/\/mail\.news-example\.co\.uk\/n\/notify\/u\/[A-Za-z0-9_-]{28}$/);
    assert.match(first.raw.toString('latin1'), /^List-Id:(\r\n)? <spring-readers-of-the-long-weekly-newsletter\.lists\.news\.example>/m);
  });
});
