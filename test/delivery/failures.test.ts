import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Mailer } from '../../src/core/mailer.ts';
import { createSesMailer } from '../../src/mail/ses.ts';
import { createNotify, } from '../../src/notify.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * Every failed delivery says whether trying again later may succeed. Each case goes through the
 * dispatcher every sender uses, with the mailer as a user configures it.
 */
async function outcomeWith(mailer: string | Mailer, subject = 'Hello') {
  const db = freshDatabaseUrl('sqlite');
  const notify = await createNotify(testOptions(db.url, { mailer }));
  try {
    const contact = await notify.contacts.upsert({ email: 'ann@example.com', name: 'Ann', attributes: { note: 'hi\r\nBcc: x@evil.example' } });
    const message = await notify.context.dispatcher.prepare('m1', { subject, html: '<p>Hi</p>' }, { cache: false });
    return await notify.context.dispatcher.deliver(message, { send: { id: 1, token: 'tok1tok1tok1tok1tok1tk' }, contact });
  } finally {
    await notify.close();
    db.cleanup();
  }
}

/** A server that accepts the connection and closes it before its greeting. */
async function hangUpServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** SESv2 SendEmail answering with `status`, `x-amzn-ErrorType` and a JSON message, as the API does for errors. */
function sesAnswering(status: number, errorType: string, message: string): Mailer {
  const fetch = (async () => new Response(JSON.stringify({ message }), { status, headers: { 'content-type': 'application/json', 'x-amzn-ErrorType': errorType } })) as unknown as typeof globalThis.fetch;
  return createSesMailer({ region: 'eu-west-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', fetch });
}

describe('failed deliveries are transient or permanent', () => {
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink({ parse: false });
  });
  after(() => sink.close());

  test('SMTP 4xx after DATA (SES SMTP throttling: 454) is transient, the reply kept as the reason', async () => {
    // the reply SES's SMTP interface gives at its sending rate:
    // https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html
    sink.failNext(1, '454 Throttling failure: Maximum sending rate exceeded');
    const o = await outcomeWith(sink.url);
    assert.equal(o.status, 'failed');
    assert.equal(o.transient, true);
    assert.equal(o.final, false);
    assert.match(o.error ?? '', /454 Throttling failure/);
  });

  test('SMTP 5xx after DATA is permanent', async () => {
    sink.failNext(1, '550 5.1.1 mailbox unavailable');
    const o = await outcomeWith(sink.url);
    assert.equal(o.status, 'failed');
    assert.equal(o.transient, false);
    assert.equal(o.final, true, 'the server said it never will: a drip step is not tried again either');
    assert.match(o.error ?? '', /550 5\.1\.1/);
  });

  test('the same sink takes the next message: sent, no transient flag', async () => {
    const o = await outcomeWith(sink.url);
    assert.equal(o.status, 'sent');
    assert.equal(o.transient, undefined);
  });

  test('connection refused is transient', async () => {
    const o = await outcomeWith(`smtp://127.0.0.1:${await closedPort()}`);
    assert.equal(o.status, 'failed');
    assert.equal(o.transient, true);
  });

  test('a server that closes the connection is transient', async () => {
    const server = await hangUpServer();
    try {
      const o = await outcomeWith(server.url);
      assert.equal(o.status, 'failed');
      assert.equal(o.transient, true);
      assert.match(o.error ?? '', /closed/i);
    } finally {
      await server.close();
    }
  });

  // SESv2 SendEmail errors (TooManyRequestsException is its 429, MessageRejected a 400):
  // https://docs.rs/aws-sdk-sesv2/1.26.0/aws_sdk_sesv2/operation/send_email/enum.SendEmailError.html
  test('SES API throttling (429 TooManyRequestsException) and a 5xx are transient; MessageRejected (400) is permanent', async () => {
    const throttled = await outcomeWith(sesAnswering(429, 'TooManyRequestsException', 'Maximum sending rate exceeded.'));
    assert.deepEqual([throttled.status, throttled.transient, throttled.final], ['failed', true, false]);
    const down = await outcomeWith(sesAnswering(503, 'InternalFailure', 'Service unavailable'));
    assert.deepEqual([down.status, down.transient], ['failed', true]);
    const rejected = await outcomeWith(sesAnswering(400, 'MessageRejected', 'Email address is not verified.'));
    assert.deepEqual([rejected.status, rejected.transient, rejected.final], ['failed', false, true]);
    assert.match(rejected.error ?? '', /SES answered 400/);
  });

  test('an SDK-style error from a custom mailer: throttling names are transient, others permanent', async () => {
    const throwing = (name: string, httpStatusCode: number): Mailer => ({
      name: 'sdk',
      async send() {
        throw Object.assign(new Error(`${name} from the provider`), { name, $metadata: { httpStatusCode } });
      },
    });
    const throttled = await outcomeWith(throwing('ThrottlingException', 400));
    assert.deepEqual([throttled.status, throttled.transient, throttled.final], ['failed', true, false], 'a throttling name beats its 400');
    const rejected = await outcomeWith(throwing('MessageRejected', 400));
    assert.deepEqual([rejected.status, rejected.transient, rejected.final], ['failed', false, true]);
  });

  test('a message the mailer refuses (returns false) and header injection in a rendered subject are permanent', async () => {
    const refusing: Mailer = { name: 'no', send: async () => false };
    const refused = await outcomeWith(refusing);
    assert.deepEqual([refused.status, refused.transient, refused.final, refused.error], ['failed', false, false, 'mailer returned false'], 'not known to be final: a drip step tries it again');
    const injected = await outcomeWith(sink.url, 'Hi {{ contact.attributes.note }}');
    assert.deepEqual([injected.status, injected.transient, injected.final], ['failed', false, false]);
    assert.match(injected.error ?? '', /^HEADER_INJECTION/);
  });
});
