// DKIM signatures checked by mailauth (a maintained third-party verifier), the key's DNS record given
// through its resolver option: every kind of message notify sends, over a real SMTP server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createDkimSigner } from '../../src/mail/dkim.ts';
import { composeMime } from '../../src/mail/mime.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { capture, confirmLink } from '../capture/helpers.ts';
import { type DkimKey, dkimKey, verifyDkim } from '../helpers/dkim.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const DOMAIN = 'news.example';
const SELECTOR = 'notify2026';
const DNS_NAME = `${SELECTOR}._domainkey.${DOMAIN}`;

function message(subject = 'Hello'): Buffer {
  const headers = { 'List-Unsubscribe': '<https://example.com/notify/unsubscribe/abc>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
  return composeMime({ from: 'News <news@news.example>', to: ['ann@example.com'], subject, date: Date.UTC(2026, 10, 24), messageId: '<t@news.example>', headers }, 'Hello  there \n\n\n', '<p>Hi</p>');
}

describe('DKIM signer', () => {
  for (const type of ['rsa', 'ed25519'] as const) {
    test(`${type}: mailauth verifies the signature; both unsubscribe headers are signed`, async () => {
      const key = dkimKey(type);
      const signed = createDkimSigner({ domainName: DOMAIN, keySelector: SELECTOR, privateKey: key.privateKey })(message('Grüße aus Zürich — über alles'), Date.now());
      const [check, ...more] = await verifyDkim(signed, { [DNS_NAME]: key.record });
      assert.equal(more.length, 0);
      assert.equal(check.result, 'pass', check.comment);
      assert.equal(check.domain, DOMAIN);
      for (const name of ['from', 'to', 'subject', 'date', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']) assert.ok(check.signed.includes(name), `${name} in h=${check.signed}`);
      const head = signed.toString('latin1').split('\r\n\r\n')[0];
      for (const line of head.split('\r\n')) assert.ok(line.length <= 78, `header line of ${line.length}: ${line}`);
    });
  }

  test('a changed List-Unsubscribe or body no longer verifies', async () => {
    const key = dkimKey();
    const signed = createDkimSigner({ domainName: DOMAIN, keySelector: SELECTOR, privateKey: key.privateKey })(message(), Date.now()).toString('latin1');
    for (const tampered of [signed.replace('/unsubscribe/abc', '/unsubscribe/xyz'), signed.replace('Hello', 'Hellp')]) {
      const [check] = await verifyDkim(Buffer.from(tampered, 'latin1'), { [DNS_NAME]: key.record });
      assert.notEqual(check.result, 'pass');
    }
  });

  const bad: [string, string][] = [
    ['not a key', 'hello'],
    ['a public key', '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----'],
    ['a 512-bit RSA key', ''],
  ];
  for (const [what, pem] of bad) {
    test(`${what} as privateKey: CONFIG_INVALID when the instance starts`, async () => {
      let privateKey = pem;
      if (!pem) {
        const { generateKeyPairSync } = await import('node:crypto');
        privateKey = generateKeyPairSync('rsa', { modulusLength: 512 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      }
      await assert.rejects(
        createNotify(testOptions('sqlite::memory:', { dkim: { domainName: DOMAIN, keySelector: SELECTOR, privateKey } })),
        (err) => isNotifyError(err, 'CONFIG_INVALID') && /dkim/.test(err.message),
      );
    });
  }

  test('a dkim option missing a field: CONFIG_INVALID naming it', async () => {
    await assert.rejects(
      createNotify(testOptions('sqlite::memory:', { dkim: { domainName: DOMAIN, keySelector: SELECTOR } as never })),
      (err) => isNotifyError(err, 'CONFIG_INVALID') && /'dkim\.privateKey'/.test(err.message),
    );
  });

  test('the dkim option as JSON text (.env), the key with \\n escapes', async () => {
    const key = dkimKey();
    const json = JSON.stringify({ domainName: DOMAIN, keySelector: SELECTOR, privateKey: key.privateKey.replace(/\n/g, '\\n') });
    const notify = await createNotify({ ...testOptions('sqlite::memory:'), env: { NOTIFY_DKIM: json } });
    try {
      assert.equal(notify.config.dkim?.domainName, DOMAIN);
    } finally {
      await notify.close();
    }
  });
});

forEachEngine('every kind of message is signed', (h) => {
  let sink: SmtpSink;
  let key: DkimKey;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    key = dkimKey();
    const dkim = { domainName: DOMAIN, keySelector: SELECTOR, privateKey: key.privateKey };
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, dkim, fromEmail: `news@${DOMAIN}`, doubleOptIn: true, captureRateLimit: 0, captureLists: ['readers'] }));
  });
  after(async () => {
    await notify?.close();
    await sink?.close();
  });

  const checkSigned = async (m: SinkMessage, unsubscribe: boolean) => {
    const [check] = await verifyDkim(m.raw, { [DNS_NAME]: key.record });
    assert.equal(check?.result, 'pass', `${m.parsed.subject}: ${check?.comment}`);
    if (unsubscribe) {
      assert.match(m.raw.toString('latin1'), /^List-Unsubscribe:(\r\n)? <http:\/\/localhost:3000\/notify\/u\/[A-Za-z0-9_-]{24}>\r\n/m);
      assert.ok(check.signed.includes('list-unsubscribe') && check.signed.includes('list-unsubscribe-post'), `h=${check.signed}`);
    }
  };
  const to = (email: string) => sink.messages.filter((m) => m.envelope.to.includes(email));

  test('campaign, test copy, drip step, one-off send and the double opt-in email', async () => {
    await notify.lists.create({ name: 'readers' });
    await notify.contacts.upsert({ email: 'ann@example.com', name: 'Ann', lists: ['readers'] });
    const campaign = await notify.campaigns.create({ subject: 'Spring news for {{ contact.name }}', html: '<p>Hi <a href="https://shop.example/">shop</a></p>', list: 'readers' });
    assert.equal((await notify.campaigns.send(campaign.id)).sent, 1);
    await checkSigned(to('ann@example.com')[0]!, true);
    // a test copy goes through the same mailer: signed, its unsubscribe headers under the signature
    assert.deepEqual((await notify.campaigns.sendTest(campaign.id, { to: ['tess@example.com'] })).sent, ['tess@example.com']);
    await checkSigned(to('tess@example.com')[0]!, true);

    await notify.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Welcome, {{ contact.name }}', markdown: 'Hello **there**' }] });
    await notify.drips.enroll({ contact: 'ann@example.com', sequence: 'welcome' });
    assert.equal((await notify.drips.process()).sent, 1);
    await checkSigned(to('ann@example.com')[1]!, true);

    assert.equal((await notify.send({ to: 'bob@example.com', subject: 'Your receipt', text: 'Thanks', category: 'transactional' })).status, 'sent');
    await checkSigned(to('bob@example.com')[0]!, false);

    const res = await capture(notify, new URLSearchParams({ email: 'cy@example.com', list: 'readers' }).toString(), { accept: 'application/json' });
    assert.equal(res.status, 200);
    await sink.waitFor(5, 10_000);
    const optin = to('cy@example.com')[0]!;
    assert.ok(confirmLink({ text: String(optin.parsed.text) }));
    await checkSigned(optin, false);
  });
});
