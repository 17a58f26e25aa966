// The message of a rare failure of the header-folding property test (mailauth's own simple/simple
// signature over a message notify composed: "bad signature"), rebuilt from the printed header block.
// It was a test bug, not notify's: mailauth's signer, given no signTime, reads the clock twice
// (Math.round(Date.now() / 1000)), once for the t= it signs and once for the t= it writes; when the
// two readings fall on either side of a half second (more likely on a loaded machine) the header it
// wrote is not the one it signed. notify's signer is given its time (t=0 in these tests).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mock, test } from 'node:test';
import { composeMime } from '../../src/mail/mime.ts';
import { createDkimSigner } from '../../src/mail/dkim.ts';
import { dkimKey, mailauthSign, verifyDkim } from '../helpers/dkim.ts';

/** notify's header block of the failing message, as printed (after mailauth's DKIM-Signature) */
const printed = [
  'From: =?UTF-8?B?5bG48KOol/K8krzzjKOn8oe9sfO9hbTzgbWc9IS/jg==?=',
  ' <z.++j-_-a6-@ze.3.d.0.co.uk>',
  'To: a@example.com',
  'Subject: =?UTF-8?B?9I+/r/O7oqDykaG3?=',
  'Date: Thu, 01 Jan 1970 00:00:00 +0000',
  'Message-ID: <TTTTTTTTTTTTTTTTTTTTTT@ze.3.d.0.co.uk>',
  'X-Note: =?UTF-8?B?9I+/r/O7oqDykaG3?=',
  'List-Id: <list.xn--zrich-bcher-strae-caf-gre-bbci0zzsgat.com>',
  'Feedback-ID: list.list:.b_-',
  'List-Unsubscribe:',
  ' <https://1-k1.e--ky4d-z.6.com:8080/app/notify/notify/u/',
  ' ______IYZ_hHIQrnnUwcaSPn>',
  'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
].join('\r\n');

/** the body composeMime makes for the text 'text' (the property test's), from a message of its own */
function body(): Buffer {
  const mime = composeMime({ from: 'a@example.com', to: ['b@example.com'], subject: 's', date: 0, messageId: '<a@example.com>', headers: {} }, 'text', undefined);
  return mime.subarray(mime.indexOf('\r\n\r\n') + 4);
}

test('the failing message rebuilt: its body hash is the printed bh=, and mailauth simple/simple passes with the clock crossing a half second inside the signer', async (t) => {
  const key = dkimKey('ed25519');
  const bare = Buffer.concat([Buffer.from(`${printed}\r\n\r\n`), body()]);
  // simple body canonicalisation: the body as is, trailing empty lines reduced to one CRLF
  const canon = bare.subarray(bare.indexOf('\r\n\r\n') + 4).toString('latin1').replace(/(\r\n)*$/, '\r\n');
  assert.equal(createHash('sha256').update(canon, 'latin1').digest('base64'), 'IiDs/o3RJSzRNJrNbwDhmqUkzxsZIYuTyOtgZG0Lg+c=');
  const raw = createDkimSigner({ domainName: 'news.example', keySelector: 'p', privateKey: key.privateKey })(bare, 0);
  // each reading of the clock 0.2 s after the one before, from x.4 s: the first two round apart
  let now = 1795619450_400;
  t.mock.method(Date, 'now', () => (now += 200) - 200);
  const simple = await mailauthSign(raw, { domainName: 'simple.example', keySelector: 'q', privateKey: key.privateKey, canonicalization: 'simple/simple', headerList: ['from', 'subject', 'list-unsubscribe', 'list-unsubscribe-post'] });
  mock.restoreAll();
  const checks = await verifyDkim(simple, { 'p._domainkey.news.example': key.record, 'q._domainkey.simple.example': key.record });
  assert.deepEqual(checks.map((c) => [c.domain, c.result, c.signed]), [
    ['simple.example', 'pass', ['list-unsubscribe-post', 'list-unsubscribe', 'subject', 'from']],
    ['news.example', 'pass', ['from', 'to', 'subject', 'date', 'message-id', 'mime-version', 'content-type', 'content-transfer-encoding', 'list-id', 'list-unsubscribe', 'list-unsubscribe-post', 'feedback-id']],
  ], checks.map((c) => c.comment).join('; '));
});
