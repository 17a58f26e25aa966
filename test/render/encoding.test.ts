import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { simpleParser } from 'mailparser';
import { formatAddress, qpEncode, qpSpliceValue } from '../../src/mail/encoding.ts';
import { headerField } from '../../src/mail/header-fold.ts';
import { composeMime } from '../../src/mail/mime.ts';

/** RFC 2045 quoted-printable decoding, written independently of the encoder under test. */
function qpDecode(encoded: Buffer): string {
  const s = encoded.toString('latin1').replace(/=\r\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '=') {
      bytes.push(Number.parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(s.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

const lines = (b: Buffer) => b.toString('latin1').split('\r\n');

test('quoted-printable pieces spliced in any order decode to the joined text; lines stay within 76 characters', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string(), fc.fullUnicodeString(), fc.constantFrom(' ', '\t', '=', '.', '\r\n', '\n', 'é')), { maxLength: 12 }), (pieces) => {
      const encoded = Buffer.concat(pieces.map((p) => qpEncode(p, true)));
      const expected = pieces.join('').replace(/\r\n|\r|\n/g, '\r\n');
      assert.equal(qpDecode(encoded), expected);
      for (const line of lines(encoded)) {
        assert.ok(line.length <= 76, `line of ${line.length}: ${JSON.stringify(line)}`);
        assert.ok(!/[ \t]$/.test(line), 'no trailing whitespace on an encoded line');
        assert.ok(!/[^\t\x20-\x7e]/.test(line), 'encoded lines are printable ASCII (tab allowed)');
      }
    }),
    { numRuns: 300 },
  );
});

test('tokens and signatures splice without encoding; other values are encoded', () => {
  assert.equal(qpSpliceValue('AbC-_123').toString(), 'AbC-_123=\r\n');
  assert.equal(qpSpliceValue('').length, 0);
  assert.equal(qpDecode(qpSpliceValue('https://t.example/notify/unsubscribe/x?s=y')), 'https://t.example/notify/unsubscribe/x?s=y');
  assert.equal(qpDecode(qpSpliceValue('Zoë & "Co"')), 'Zoë & "Co"');
});

test('URL-shaped values (an unsubscribe URL with ?s=) splice to exactly what the encoder writes', () => {
  const urlChar = fc.constantFrom(...'AZaz09_.-/:?=&'.split(''), 'x', 'Q', '5');
  fc.assert(
    fc.property(fc.array(urlChar, { maxLength: 240 }), (chars) => {
      const value = chars.join('');
      assert.equal(qpSpliceValue(value).toString('latin1'), qpEncode(value, true).toString('latin1'));
    }),
    { numRuns: 500 },
  );
  // runs of '=' and runs longer than a line, at every column a line can end on
  const mostlyEquals = fc.constantFrom('=', '=', 'a', '/');
  fc.assert(
    fc.property(fc.array(mostlyEquals, { maxLength: 240 }), fc.integer({ min: 0, max: 160 }), (chars, run) => {
      const value = 'u'.repeat(run) + chars.join('');
      assert.equal(qpSpliceValue(value).toString('latin1'), qpEncode(value, true).toString('latin1'));
    }),
    { numRuns: 1000 },
  );
  for (let n = 0; n <= 160; n++) for (const tail of ['', '=', '==', 'x=y']) assert.equal(qpSpliceValue('h'.repeat(n) + tail).toString('latin1'), qpEncode('h'.repeat(n) + tail, true).toString('latin1'));
  const unsubscribe = 'https://track.example.com/notify/unsubscribe/AbCdEfGhIjKlMnOpQrStUv?s=AbCdEfGhIjKlMnOpQrStUv';
  assert.equal(qpSpliceValue(unsubscribe).toString('latin1'), qpEncode(unsubscribe, true).toString('latin1'));
  assert.equal(qpSpliceValue('a==b').toString('latin1'), 'a=3D=3Db=\r\n');
});

test('header values: plain ASCII unchanged, anything else as encoded words that a parser reads back', async () => {
  assert.equal(headerField('Subject', 'Hello world'), 'Subject: Hello world');
  await fc.assert(
    fc.asyncProperty(fc.fullUnicodeString({ minLength: 1, maxLength: 120 }).filter((s) => !/[\r\n]/.test(s) && s.trim() === s && s.length > 0), async (subject) => {
      const raw = composeMime({ from: formatAddress('news@example.com', 'Zoë Ünïcode'), to: ['a@example.com'], subject, date: 0, messageId: '<x@example.com>', headers: {} }, 'text', undefined);
      const parsed = await simpleParser(raw);
      // plain ASCII goes out as typed and comes back exactly; encoded words may have runs of whitespace folded
      if (/^[\x20-\x7e]*$/.test(subject)) assert.equal(parsed.subject, subject);
      else assert.equal(parsed.subject?.replace(/\s+/g, ' '), subject.replace(/\s+/g, ' '));
      assert.equal(parsed.from?.value[0].name, 'Zoë Ünïcode');
      const head = raw.toString('latin1').split('\r\n\r\n')[0];
      for (const line of head.split('\r\n')) assert.ok(line.length <= 78, `header line of ${line.length}: ${line}`);
    }),
    { numRuns: 60 },
  );
});

test('display names with specials are quoted and escaped', () => {
  assert.equal(formatAddress('a@example.com', 'News'), 'News <a@example.com>');
  assert.equal(formatAddress('a@example.com', 'Smith, John "JJ"'), '"Smith, John \\"JJ\\"" <a@example.com>');
  assert.equal(formatAddress('a@example.com', null), 'a@example.com');
});
