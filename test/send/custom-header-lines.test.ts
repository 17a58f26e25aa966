// Custom headers (the `headers` of send() and of a campaign) are written within 78-character lines,
// folded at their white space, as they were given: a value with a word no line can hold is refused
// (INVALID_INPUT naming the header) instead of being written longer or turned into encoded words a
// provider reading the header would not decode. What is written is read back by mailparser.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { pythonRead } from '../mail/python-read.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const w = (n: number, c = 'w') => c.repeat(n);
const headLines = (raw: Buffer) => raw.toString('utf8').split('\r\n\r\n')[0].split('\r\n');

forEachEngine('custom header lines', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, fromName: 'News' }));
  });
  after(async () => {
    await notify?.close();
    await sink?.close();
  });

  test('long values fold at their spaces, words up to what a line holds are kept as given, and read back whole', async () => {
    const headers = {
      'X-Tags': Array.from({ length: 40 }, (_, i) => `tag-${i}`).join(' '),
      // a word of 77 after a space: a line of its own (` word`)
      'X-Ids': `a ${w(77)} b`,
      // the first word of an unstructured value shares the line with `X-First: ` (78 - 9 = 69)
      'X-First': `${w(69)} rest`,
      // a structured one may fold right after the colon, so its first word may be 77
      References: `<${w(75, 'r')}> <b@news.example>`,
      // a List-* URL too long for a line folds inside its brackets
      'List-Help': `<https://${w(90, 'h')}.example/help>`,
      // non-ASCII text is encoded words sized for their lines
      'X-Note': `Grüße ${w(100, 'ü')}`,
      // so is text with a tab (not printable ASCII to the writer)
      'X-Tabs': `a\t${w(78)}`,
    };
    const before = sink.messages.length;
    assert.equal((await notify.send({ to: 'ann@example.com', subject: 'Headers', text: 'x', headers })).status, 'sent');
    await sink.waitFor(before + 1, 10_000);
    const m = sink.messages[before];
    assert.deepEqual(
      headLines(m.raw).filter((l) => l.length > 78),
      [],
    );
    // unfolding (CRLF removed) gives each back exactly; mailparser reads the same
    for (const name of ['X-Tags', 'X-Ids', 'X-First', 'References'] as const) {
      const line = m.parsed.headerLines.find((l) => l.key === name.toLowerCase())?.line ?? '';
      assert.equal(line.replace(/\r\n/g, ''), `${name}: ${headers[name]}`);
    }
    assert.equal(m.parsed.headers.get('x-tags'), headers['X-Tags']);
    assert.match(m.raw.toString('latin1'), new RegExp(`\\r\\nX-Ids: a\\r\\n ${w(77)}\\r\\n b\\r\\n`));
    assert.match(m.raw.toString('latin1'), new RegExp(`\\r\\nX-First: ${w(69)}\\r\\n rest\\r\\n`));
    assert.equal(String((m.parsed.headers.get('list') as { help?: { url?: string } }).help?.url).replace(/\s/g, ''), `https://${w(90, 'h')}.example/help`);
    // mailparser leaves an unknown header's encoded words as they are: Python's email package decodes them
    const python = pythonRead([m.raw], ['x-note', 'x-tabs']);
    if (python) assert.deepEqual(python[0].headers, { 'x-note': headers['X-Note'], 'x-tabs': headers['X-Tabs'] });
  });

  test('a word no line can hold is INVALID_INPUT naming the header, at send() and at campaign create; nothing is sent or stored', async () => {
    const refused: [Record<string, string>, string, RegExp][] = [
      [{ 'X-Token': w(78) }, 'X-Token', /Header X-Token has a word of 78 characters .*at most 69 fit/],
      [{ 'X-Token': `a ${w(78)}` }, 'X-Token', /Header X-Token has a word of 78 characters .*at most 77 fit/],
      [{ 'X-First': `${w(70)} rest` }, 'X-First', /word of 70 characters .*at most 69/],
      [{ 'X-Mailgun-Variables': JSON.stringify({ user: w(40, 'u'), campaign: w(40, 'c') }) }, 'X-Mailgun-Variables', /X-Mailgun-Variables has a word of 105 characters/],
      [{ References: `<${w(76, 'r')}> <b@news.example>` }, 'References', /References has a word of 78/],
      [{ 'In-Reply-To': `  <${w(80, 'i')}@news.example>` }, 'In-Reply-To', /In-Reply-To has a word/],
      // List-Id's <label.domain> is no URL (RFC 2919): never folded inside, so a long one is refused
      [{ 'List-Id': `<${w(70, 'l')}.news.example>` }, 'List-Id', /List-Id has a word of 85 characters .*at most 77/],
    ];
    const before = sink.messages.length;
    for (const [headers, name, message] of refused) {
      const check = (e: unknown) => isNotifyError(e, 'INVALID_INPUT') && e.details?.header === name && message.test(e.message);
      await assert.rejects(notify.send({ to: 'refused@example.com', subject: 'x', text: 'x', headers }), check, JSON.stringify(headers));
      await assert.rejects(notify.campaigns.create({ subject: 'x', html: 'x', headers } as never), check, JSON.stringify(headers));
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sink.messages.length, before);
    assert.equal(await notify.contacts.get('refused@example.com'), undefined);
    assert.equal((await notify.campaigns.list()).length, 0);
  });
});
