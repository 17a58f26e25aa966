import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { createNotify, type Notify } from '../../src/notify.ts';
import { type EngineHandle, forEachEngine, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { AJAX, capture, confirmLink, flashOf, form } from './helpers.ts';

/*
 * Confirmation emails leave through the mailer the instance is configured with, in whatever form the
 * option names it, exactly like campaign mail: these tests use string mailers, as a config file does.
 */

const OPTIN = { doubleOptIn: true, captureRateLimit: 0, fromName: 'News', captureLists: ['news', 'extra'] } as const;

const confirmByPost = (n: Notify, link: string) => call(n, new URL(link).pathname, { method: 'POST' });
const statusOf = async (n: Notify, email: string) => (await n.contacts.get(email))?.status;
/** messages whose envelope holds the address (compared case-insensitively: nodemailer lower-cases the domain) */
const sentTo = (sink: SmtpSink, email: string) => sink.messages.filter((m) => m.envelope.to.some((to) => to.toLowerCase() === email.toLowerCase()));

/** An instance on the engine's database, built in before() and closed in after(). */
function useInstance(h: EngineHandle, options: () => Parameters<typeof createNotify>[0]): () => Notify {
  let notify: Notify | undefined;
  before(async () => {
    notify = await createNotify({ ...testOptions(h.url), ...options() });
  });
  after(() => notify?.close());
  return () => notify!;
}

forEachEngine('double opt-in over a real SMTP server (smtp:// mailer)', (h) => {
  let sink: SmtpSink;
  let proxy: TcpProxy;
  before(async () => {
    sink = await startSmtpSink();
    // between notify and the sink, so a test can take the SMTP server away and bring it back
    proxy = await startTcpProxy({ host: '127.0.0.1', port: sink.port });
  });
  const notify = useInstance(h, () => ({ ...OPTIN, mailer: `smtp://127.0.0.1:${proxy.port}` }));
  after(async () => {
    await proxy.close();
    await sink.close();
  });

  test('the confirmation arrives over SMTP; a GET of its link changes nothing, its POST subscribes', async () => {
    const res = await capture(notify(), form({ email: 'Sam@Example.com', name: 'Sam' }), AJAX);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true, message: 'Thanks! Please check your inbox and confirm your subscription.' });
    const [mail] = sentTo(sink, 'Sam@Example.com');
    assert.ok(mail, 'the confirmation reached the SMTP server before the answer');
    assert.equal(mail.envelope.from, 'news@example.com');
    assert.equal(mail.parsed.subject, 'Please confirm your subscription');
    assert.deepEqual(mail.parsed.from?.value, [{ name: 'News', address: 'news@example.com' }]);
    const link = confirmLink(mail.parsed);
    assert.ok(link.startsWith('http://localhost:3000/notify/confirm/'));
    assert.ok(String(mail.parsed.html).includes(`href="${link}"`), 'the HTML part carries the same link');
    assert.equal(await statusOf(notify(), 'sam@example.com'), 'pending');
    assert.equal((await call(notify(), new URL(link).pathname)).status, 200);
    assert.equal(await statusOf(notify(), 'sam@example.com'), 'pending', 'a GET (mail scanner) confirms nothing');
    assert.equal((await confirmByPost(notify(), link)).status, 200);
    assert.equal(await statusOf(notify(), 'sam@example.com'), 'subscribed');
  });

  test('an unsubscribed address signing up again is sent the re-subscribe confirmation over SMTP', async () => {
    await notify().contacts.upsert({ email: 'back@example.com', status: 'unsubscribed' });
    assert.equal((await capture(notify(), form({ email: 'back@example.com' }), AJAX)).status, 200);
    const [mail] = sentTo(sink, 'back@example.com');
    assert.equal(mail?.parsed.subject, 'Confirm that you want to subscribe again');
    assert.equal(await statusOf(notify(), 'back@example.com'), 'unsubscribed', 'the post itself lifts nothing');
    assert.equal((await confirmByPost(notify(), confirmLink(mail.parsed))).status, 200);
    assert.equal(await statusOf(notify(), 'back@example.com'), 'subscribed');
  });

  test('an SMTP 5xx refusal answers 503 and stores nothing; the same sign-up posted again goes through', async () => {
    sink.failNext(1);
    const refused = await capture(notify(), form({ email: 'refused@example.com', name: 'Rae', list: 'news' }), AJAX);
    assert.equal(refused.status, 503);
    assert.deepEqual(await refused.json(), { ok: false, code: 'unavailable', errors: ['Sorry, we could not save your sign-up right now. Please try again later.'] });
    assert.equal(await notify().contacts.get('refused@example.com'), undefined, 'nothing is stored on a failure');
    assert.equal(sentTo(sink, 'refused@example.com').length, 0);

    assert.equal((await capture(notify(), form({ email: 'refused@example.com', name: 'Rae', list: 'news' }), AJAX)).status, 200);
    const [mail] = sentTo(sink, 'refused@example.com');
    assert.equal((await confirmByPost(notify(), confirmLink(mail.parsed))).status, 200);
    const c = await notify().contacts.get('refused@example.com');
    assert.deepEqual([c?.status, c?.name, c?.lists], ['subscribed', 'Rae', ['news']]);
  });

  test('a refused resend leaves a pending or unsubscribed contact as it was, and a pending one keeps its earlier link', async () => {
    assert.equal((await capture(notify(), form({ email: 'twice@example.com' }), AJAX)).status, 200);
    const first = confirmLink(sentTo(sink, 'twice@example.com')[0].parsed);
    await notify().contacts.upsert({ email: 'left@example.com', status: 'unsubscribed' });
    sink.failNext(2);
    for (const email of ['twice@example.com', 'left@example.com']) {
      assert.equal((await capture(notify(), form({ email, name: 'Changed', list: 'extra', plan: 'pro' }), AJAX)).status, 503, email);
    }
    for (const [email, status] of [
      ['twice@example.com', 'pending'],
      ['left@example.com', 'unsubscribed'],
    ]) {
      const c = await notify().contacts.get(email);
      assert.deepEqual([c?.status, c?.name, c?.lists, c?.attributes], [status, null, [], {}], `${email} is unchanged`);
    }
    assert.equal((await confirmByPost(notify(), first)).status, 200, 'the link already delivered still works');
    assert.equal(await statusOf(notify(), 'twice@example.com'), 'subscribed');
  });

  test('an SMTP server that is down answers 503 (form post: back with notify_errors) and stores nothing; a retry once it is back goes through', async () => {
    await proxy.cut();
    try {
      const down = await capture(notify(), form({ email: 'down@example.com' }), { referer: 'http://localhost:3000/join' });
      assert.equal(down.status, 503);
      assert.equal(down.headers.get('location'), '/join');
      assert.deepEqual(flashOf(down.headers.getSetCookie(), 'notify_errors'), ['Sorry, we could not save your sign-up right now. Please try again later.']);
      assert.equal(await notify().contacts.get('down@example.com'), undefined);
    } finally {
      await proxy.restore();
    }
    assert.equal((await capture(notify(), form({ email: 'down@example.com' }), AJAX)).status, 200);
    const [mail] = sentTo(sink, 'down@example.com');
    assert.equal((await confirmByPost(notify(), confirmLink(mail.parsed))).status, 200);
    assert.equal(await statusOf(notify(), 'down@example.com'), 'subscribed');
  });
});

forEachEngine('double opt-in in testMode', (h) => {
  const { logger, lines } = recordingLogger();
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink();
  });
  const notify = useInstance(h, () => ({ ...OPTIN, mailer: sink.url, testMode: true, logger }));
  after(() => sink.close());

  test('the confirmation is logged, nothing reaches the SMTP server, the contact waits pending', async () => {
    assert.equal((await capture(notify(), form({ email: 'dry@example.com' }), AJAX)).status, 200);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(sink.messages.length, 0);
    const logged = lines.filter((l) => l.msg === 'would send (not delivered)');
    assert.equal(logged.length, 1);
    assert.deepEqual([logged[0].to, logged[0].subject], [['dry@example.com'], 'Please confirm your subscription']);
    assert.equal(await statusOf(notify(), 'dry@example.com'), 'pending');
  });
});

forEachEngine("double opt-in through the 'log' mailer", (h) => {
  const { logger, lines } = recordingLogger();
  const notify = useInstance(h, () => ({ ...OPTIN, mailer: 'log', logger }));

  test('the confirmation goes to the log mailer (one line naming it), the post answers 200, the contact waits pending', async () => {
    assert.equal((await capture(notify(), form({ email: 'logged@example.com' }), AJAX)).status, 200);
    const logged = lines.filter((l) => l.msg === 'would send (not delivered)');
    assert.equal(logged.length, 1);
    assert.deepEqual([logged[0].mailer, logged[0].to, logged[0].subject], ['log', ['logged@example.com'], 'Please confirm your subscription']);
    assert.equal(await statusOf(notify(), 'logged@example.com'), 'pending');
  });
});

forEachEngine('double opt-in through an outbox: mailer', (h) => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-optin-outbox-'));
  const notify = useInstance(h, () => ({ ...OPTIN, mailer: `outbox:${dir}` }));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the confirmation is written as an .eml file whose link confirms', async () => {
    assert.equal((await capture(notify(), form({ email: 'eml@example.com' }), AJAX)).status, 200);
    const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
    assert.equal(files.length, 1);
    const parsed = await simpleParser(readFileSync(join(dir, files[0])));
    assert.equal(parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : undefined, 'eml@example.com');
    assert.equal(parsed.subject, 'Please confirm your subscription');
    assert.equal((await confirmByPost(notify(), confirmLink(parsed))).status, 200);
    assert.equal(await statusOf(notify(), 'eml@example.com'), 'subscribed');
  });
});

forEachEngine("double opt-in through the 'ses' mailer", (h) => {
  const AWS = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' };
  const saved = Object.fromEntries(Object.keys(AWS).map((k) => [k, process.env[k]]));
  const calls: { url: string; body: { Destination: { ToAddresses: string[] }; Content: { Raw: { Data: string } } } }[] = [];
  let answer = 200;
  const fakeSes = (async (url: URL, init: RequestInit) => {
    calls.push({ url: String(url), body: JSON.parse(String(init.body)) });
    return new Response(answer === 200 ? '{"MessageId":"ses-1"}' : '{"message":"Daily sending quota exceeded"}', { status: answer });
  }) as unknown as typeof fetch;
  before(() => Object.assign(process.env, AWS));
  const notify = useInstance(h, () => ({ ...OPTIN, mailer: 'ses', fetch: fakeSes }));
  after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test('the confirmation is one SES SendEmail call; an SES error answers 503 and stores nothing', async () => {
    assert.equal((await capture(notify(), form({ email: 'ses@example.com' }), AJAX)).status, 200);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].url, 'https://email.eu-west-1.amazonaws.com/v2/email/outbound-emails');
    assert.deepEqual(calls[0].body.Destination.ToAddresses, ['ses@example.com']);
    const parsed = await simpleParser(Buffer.from(calls[0].body.Content.Raw.Data, 'base64'));
    assert.equal((await confirmByPost(notify(), confirmLink(parsed))).status, 200);
    assert.equal(await statusOf(notify(), 'ses@example.com'), 'subscribed');

    answer = 400;
    assert.equal((await capture(notify(), form({ email: 'quota@example.com' }), AJAX)).status, 503);
    assert.equal(calls.length, 2);
    assert.equal(await notify().contacts.get('quota@example.com'), undefined);
  });
});

forEachEngine('double opt-in without a usable sender', (h) => {
  const cases = [
    ['no fromEmail', { fromEmail: '' }],
    ['a fromEmail that is not an address', { fromEmail: 'news at example' }],
    ['a fromName with a line break', { fromName: 'News\r\nBcc: x@example.com' }],
  ] as const;
  for (const [what, sender] of cases) {
    const notify = useInstance(h, () => ({ ...OPTIN, mailer: 'log', ...sender }));
    test(`${what}: 503 unavailable (the operator's configuration, not the visitor's address) and nothing stored`, async () => {
      const email = `sender-${cases.findIndex(([w]) => w === what)}@example.com`;
      const res = await capture(notify(), form({ email }), AJAX);
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { code: string }).code, 'unavailable');
      assert.equal(await notify().contacts.get(email), undefined);
    });
  }
});
