// Values without white space cannot be folded: the options that make them are held to the lengths that
// keep every header line within 78 characters, and refused beyond (CONFIG_INVALID naming the option).
// What is written at those limits is read back by mailparser, Python's email package and mailauth.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { loadConfig } from '../../src/config.ts';
import { BOUNCE_DOMAIN_MAX, FROM_ADDRESS_MAX, LIST_ID_DOMAIN_MAX, MESSAGE_ID_DOMAIN_MAX } from '../../src/core/header-limits.ts';
import { formatFrom } from '../../src/core/headers.ts';
import { listHeaders, listUnsubscribeHeaders, MAX_FOLDABLE_HOST } from '../../src/core/list-headers.ts';
import { isNotifyError, type NotifyError } from '../../src/errors.ts';
import { withDeliverability } from '../../src/mail/deliverability.ts';
import { createDkimSigner } from '../../src/mail/dkim.ts';
import { createOutboxMailer } from '../../src/mail/outbox.ts';
import { composeMime } from '../../src/mail/mime.ts';
import { createNotify } from '../../src/notify.ts';
import { capture } from '../capture/helpers.ts';
import { dkimKey, verifyDkim } from '../helpers/dkim.ts';
import { domainOfLength } from '../helpers/domains.ts';
import { testOptions } from '../helpers/engines.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { pythonRead } from './python-read.ts';

const longLines = (raw: Buffer) =>
  raw
    .toString('utf8')
    .split('\r\n\r\n')[0]
    .split('\r\n')
    .filter((l) => l.length > 78);

async function configError(options: Record<string, unknown>): Promise<NotifyError> {
  try {
    await loadConfig(options, { configFile: false, envFile: false, env: {} });
  } catch (err) {
    assert.ok(isNotifyError(err, 'CONFIG_INVALID'), String(err));
    return err;
  }
  assert.fail(`accepted ${JSON.stringify(options)}`);
}

const accepts = (options: Record<string, unknown>) => loadConfig(options, { configFile: false, envFile: false, env: {} });

describe('options held to what fits a header line', () => {
  test(`listIdDomain: ${LIST_ID_DOMAIN_MAX} characters taken, one more refused naming the option`, async () => {
    await accepts({ listIdDomain: domainOfLength(LIST_ID_DOMAIN_MAX) });
    const err = await configError({ listIdDomain: domainOfLength(LIST_ID_DOMAIN_MAX + 1) });
    assert.equal(err.details?.option, 'listIdDomain');
    assert.match(err.message, /Option 'listIdDomain' .*at most 60 characters/);
  });

  test(`fromEmail: a domain of ${MESSAGE_ID_DOMAIN_MAX} taken, ${MESSAGE_ID_DOMAIN_MAX + 1} refused (Message-ID); an address over ${FROM_ADDRESS_MAX} refused (From)`, async () => {
    await accepts({ fromEmail: `n@${domainOfLength(MESSAGE_ID_DOMAIN_MAX)}` });
    let err = await configError({ fromEmail: `n@${domainOfLength(MESSAGE_ID_DOMAIN_MAX + 1)}` });
    assert.equal(err.details?.option, 'fromEmail');
    assert.match(err.message, /Option 'fromEmail' .*domain of 53 characters; at most 52 fit the Message-ID/);
    const local = (n: number) => `${'x'.repeat(n - 1 - 'news.example'.length)}@news.example`;
    await accepts({ fromEmail: local(FROM_ADDRESS_MAX) });
    err = await configError({ fromEmail: local(FROM_ADDRESS_MAX + 1) });
    assert.equal(err.details?.option, 'fromEmail');
    // an international domain counts as its punycode, the form it is written in: 48 characters here, 59 as punycode
    err = await configError({ fromEmail: 'n@zürich-bücher-straße-café-grüße-für-alle.example' });
    assert.equal(err.details?.option, 'fromEmail');
  });

  test('a campaign, send or test address past those limits is INVALID_INPUT naming fromEmail', () => {
    assert.throws(() => formatFrom('News', `n@${domainOfLength(MESSAGE_ID_DOMAIN_MAX + 1)}`), (e) => isNotifyError(e, 'INVALID_INPUT') && e.details?.field === 'fromEmail');
    assert.equal(formatFrom('News', `n@${domainOfLength(MESSAGE_ID_DOMAIN_MAX)}`).address, `n@${domainOfLength(MESSAGE_ID_DOMAIN_MAX)}`);
  });

  test('feedbackId: refused when a 16-digit id, kind campaign and a list cut to 14 would pass 77 characters', async () => {
    const fits = `{id}:{list}:{kind}:${'s'.repeat(77 - 16 - 14 - 8 - 3)}`;
    await accepts({ feedbackId: fits });
    const err = await configError({ feedbackId: `${fits}x` });
    assert.equal(err.details?.option, 'feedbackId');
    assert.match(err.message, /Feedback-ID of 78 characters/);
    assert.equal((await configError({ feedbackId: 'x'.repeat(78) })).details?.option, 'feedbackId');
  });

  test(`bounceDomain: ${BOUNCE_DOMAIN_MAX} characters taken, one more refused naming the option (Return-Path: <bounces+token@domain> on one line)`, async () => {
    await accepts({ bounceDomain: domainOfLength(BOUNCE_DOMAIN_MAX) });
    await accepts({ bounceMailbox: 'imap://u:p@127.0.0.1:1/INBOX', bounceDomain: domainOfLength(BOUNCE_DOMAIN_MAX) });
    for (const options of [{ bounceDomain: domainOfLength(BOUNCE_DOMAIN_MAX + 1) }, { bounceMailbox: 'imap://u:p@127.0.0.1:1/INBOX', bounceDomain: domainOfLength(90) }]) {
      const err = await configError(options);
      assert.equal(err.details?.option, 'bounceDomain');
      assert.match(err.message, /Option 'bounceDomain' .*at most 32 characters.*Return-Path/);
    }
  });

  test('dkim: a domainName or keySelector over 74 characters is refused', async () => {
    const key = dkimKey('ed25519').privateKey;
    await accepts({ dkim: { domainName: domainOfLength(74), keySelector: 's'.repeat(74), privateKey: key } });
    assert.equal((await configError({ dkim: { domainName: domainOfLength(75), keySelector: 's', privateKey: key } })).details?.option, 'dkim');
    assert.equal((await configError({ dkim: { domainName: 'news.example', keySelector: 's'.repeat(75), privateKey: key } })).details?.option, 'dkim');
  });
});

describe('header values at the limits', () => {
  test('a long list name is cut with a hash; two that begin alike keep different List-Ids, Feedback-IDs too', () => {
    const config = { listIdDomain: domainOfLength(LIST_ID_DOMAIN_MAX), feedbackId: `{list}:{kind}:${'s'.repeat(40)}` };
    const a = listHeaders(config, { kind: 'campaign', id: 1, list: `Spring readers of the weekly newsletter ${'x'.repeat(40)} A` });
    const b = listHeaders(config, { kind: 'campaign', id: 1, list: `Spring readers of the weekly newsletter ${'x'.repeat(40)} B` });
    assert.notEqual(a['List-Id'], b['List-Id']);
    assert.notEqual(a['Feedback-ID'], b['Feedback-ID']);
    assert.match(a['List-Id'], /^<spring--?[a-f0-9]{6}\./);
    assert.ok(a['List-Id'].length <= 77 && a['List-Id'].length >= 76, a['List-Id']);
    assert.ok(a['Feedback-ID'].length <= 77, a['Feedback-ID']);
    // a short name is kept as it is
    assert.equal(listHeaders(config, { kind: 'campaign', list: 'News' })['List-Id'], `<news.${config.listIdDomain}>`);
  });

  test('every header line within 78 at every limit; mailparser, Python and mailauth read the values back', async () => {
    const fromDomain = domainOfLength(MESSAGE_ID_DOMAIN_MAX, 'f');
    const listIdDomain = domainOfLength(LIST_ID_DOMAIN_MAX, 'l');
    const host = `https://${domainOfLength(MAX_FOLDABLE_HOST - 'https://'.length, 'h')}`;
    const from = `News <${'n'.repeat(FROM_ADDRESS_MAX - 1 - fromDomain.length)}@${fromDomain}>`;
    const list = `A list whose name is far too long for any List-Id line ${'z'.repeat(30)}`;
    const headers = {
      ...listHeaders({ listIdDomain, feedbackId: `{id}:{list}:{kind}:${'s'.repeat(30)}` }, { kind: 'campaign', id: Number.MAX_SAFE_INTEGER, list }),
      ...listUnsubscribeHeaders(host, 'secret', 2 ** 40 - 1, 'unused'),
    };
    const messageId = `<${'t'.repeat(22)}@${fromDomain}>`;
    const key = dkimKey();
    const dkimDomain = domainOfLength(74, 'd');
    const raw = createDkimSigner({ domainName: dkimDomain, keySelector: 's'.repeat(74), privateKey: key.privateKey })(
      composeMime({ from, to: ['ann@example.com'], subject: 'Limits', date: 0, messageId, headers }, 'text', undefined),
      Date.now(),
    );
    assert.deepEqual(longLines(raw), []);
    const parsed = await simpleParser(raw);
    assert.equal(parsed.messageId, messageId);
    assert.equal(parsed.from?.value[0].address, from.slice(6, -1));
    assert.equal((parsed.headers.get('list') as { unsubscribe?: { url?: string } }).unsubscribe?.url, headers['List-Unsubscribe'].slice(1, -1));
    assert.equal(parsed.headers.get('feedback-id'), headers['Feedback-ID']);
    const python = pythonRead([raw], ['message-id', 'list-id', 'list-unsubscribe', 'feedback-id']);
    if (python) {
      const h = python[0].headers;
      assert.deepEqual(
        Object.fromEntries(Object.entries(h).map(([k, v]) => [k, v.trimStart()])),
        { 'message-id': messageId, 'list-id': headers['List-Id'], 'list-unsubscribe': headers['List-Unsubscribe'], 'feedback-id': headers['Feedback-ID'] },
      );
    }
    const [check] = await verifyDkim(raw, { [`${'s'.repeat(74)}._domainkey.${dkimDomain}`]: key.record });
    assert.equal(check.result, 'pass', check.comment);
    for (const name of ['message-id', 'list-id', 'list-unsubscribe', 'list-unsubscribe-post', 'feedback-id']) assert.ok(check.signed.includes(name), name);
  });

  test('a message signed without a Message-ID of its own gets <token@From domain>, not the longer DKIM domain', async () => {
    const sent: Buffer[] = [];
    const mailer = withDeliverability(
      {
        name: 'keep',
        send: async (m) => {
          sent.push(m.raw!);
          return { messageId: m.messageId };
        },
      },
      { dkim: { domainName: domainOfLength(74, 'd'), keySelector: 's', privateKey: dkimKey('ed25519').privateKey } },
    );
    await mailer.send({ from: 'News <news@news.example>', to: ['ann@example.com'], subject: 'Hi', text: 'x', headers: {}, sendToken: 'T'.repeat(22) });
    assert.equal((await simpleParser(sent[0])).messageId, `<${'T'.repeat(22)}@news.example>`);
    assert.deepEqual(longLines(sent[0]), []);
  });

  test(`the outbox writes its Return-Path as a receiving server does: a bounceDomain of ${BOUNCE_DOMAIN_MAX} makes one line of 78`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-limits-'));
    try {
      const bounceDomain = domainOfLength(BOUNCE_DOMAIN_MAX, 'b');
      const mailer = withDeliverability(createOutboxMailer(dir), { bounceDomain });
      await mailer.send({ from: 'news@news.example', to: ['ann@example.com'], subject: 'Hi', text: 'x', headers: {}, sendToken: 'T'.repeat(22) });
      const raw = readFileSync(join(dir, readdirSync(dir)[0]));
      assert.deepEqual(longLines(raw), []);
      const line = `Return-Path: <bounces+${'T'.repeat(22)}@${bounceDomain}>`;
      assert.equal(line.length, 78);
      assert.ok(raw.toString('latin1').startsWith(`${line}\r\n`), raw.toString('latin1').slice(0, 100));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the double opt-in email over SMTP without DKIM (no raw message handed over): notify writes it, within 78 with a 52-character From domain', async () => {
    const sink = await startSmtpSink();
    const fromEmail = `news@${domainOfLength(MESSAGE_ID_DOMAIN_MAX, 'f')}`;
    const notify = await createNotify(testOptions('sqlite::memory:', { mailer: sink.url, fromEmail, fromName: 'Frühlings-Newsletter der Gärtnerei', doubleOptIn: true, captureRateLimit: 0 }));
    try {
      const res = await capture(notify, new URLSearchParams({ email: 'cy@example.com' }).toString(), { accept: 'application/json' });
      assert.equal(res.status, 200);
      await sink.waitFor(1, 10_000);
      const m = sink.messages[0];
      assert.deepEqual(longLines(m.raw), []);
      assert.match(String(m.parsed.messageId), new RegExp(`^<[A-Za-z0-9_-]{22}@${fromEmail.slice(5).replace(/\./g, '\\.')}>$`));
    } finally {
      await notify.close();
      await sink.close();
    }
  });
});

