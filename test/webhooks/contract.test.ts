import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { before, describe, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { manualClock } from '../../src/core/clock.ts';
import type { CreateNotifyOptions } from '../../src/notify.ts';
import type { WebhookDriverInterface } from '../../src/webhooks/contract.ts';
import { resolveWebhookDriver } from '../../src/webhooks/index.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { fakeFetch, signedSns, TEST_CERT, TEST_CERT_URL, TEST_NOW, TEST_TOPIC, webhookRequest } from './helpers.ts';

/**
 * One contract for every webhook driver. A driver joins by adding one case to CASES: the options
 * that choose it, and how its provider delivers (and signs) one bounce, soft bounce or complaint.
 * Payloads follow each provider's documented example, with the address and ids of the test.
 */
type Kind = 'bounce' | 'soft_bounce' | 'complaint';

interface Delivery {
  body: string;
  headers: Record<string, string>;
  /** the provider's id of the message the event is about, as the driver must report it */
  messageId: string;
}

interface DriverCase {
  name: string;
  /** createNotify options that choose and configure the driver */
  options: CreateNotifyOptions;
  /** one event of `kind` for `email`, delivered and signed as the provider does */
  deliver(kind: Kind, email: string): Delivery;
  /** the delivery altered after signing, where the provider's signature covers it */
  tamper(d: Delivery): Delivery;
  /** the same delivery with no signature or credentials at all */
  unsign(d: Delivery): Delivery;
}

let seq = 0;
const next = () => ++seq;
const now = () => Math.floor(Date.now() / 1000);
const json = { 'content-type': 'application/json' };

/** SES notifications through SNS, signed with the test key; the certificate is served by the injected fetch. */
function sesCase(): DriverCase {
  const snsHeaders = { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' };
  return {
    name: 'ses',
    options: { webhookDriver: 'ses', snsTopicArns: [TEST_TOPIC], fetch: fakeFetch({ [TEST_CERT_URL]: TEST_CERT }).fetch, clock: manualClock(TEST_NOW) },
    deliver(kind, email) {
      const messageId = `0100018c-${next()}-contract-000000`;
      // Shapes of the bounce and complaint examples in
      // https://docs.aws.amazon.com/ses/latest/dg/notification-examples.html
      const mail = { timestamp: '2030-06-01T11:58:00.000Z', source: 'news@example.com', sourceArn: 'arn:aws:ses:eu-west-1:123456789012:identity/example.com', sendingAccountId: '123456789012', messageId, destination: [email] };
      const message =
        kind === 'complaint'
          ? { notificationType: 'Complaint', complaint: { userAgent: 'AnyCompany Feedback Loop (V0.01)', complainedRecipients: [{ emailAddress: email }], complaintFeedbackType: 'abuse', arrivalDate: '2030-06-01T11:59:00.000Z', timestamp: '2030-06-01T11:59:00.000Z', feedbackId: `feedback-${seq}` }, mail }
          : {
              notificationType: 'Bounce',
              bounce: {
                bounceType: kind === 'bounce' ? 'Permanent' : 'Transient',
                bounceSubType: kind === 'bounce' ? 'General' : 'MailboxFull',
                bouncedRecipients: [{ emailAddress: email, status: kind === 'bounce' ? '5.1.1' : '4.2.2', action: 'failed', diagnosticCode: kind === 'bounce' ? `smtp; 550 5.1.1 <${email}>... User` : 'smtp; 452 4.2.2 Mailbox full' }],
                reportingMTA: 'dns; email.example.com',
                timestamp: '2030-06-01T11:59:00.000Z',
                feedbackId: `feedback-${seq}`,
              },
              mail,
            };
      return { body: JSON.stringify(signedSns({ Type: 'Notification', Message: JSON.stringify(message) })), headers: snsHeaders, messageId };
    },
    tamper(d) {
      const sns = JSON.parse(d.body);
      return { ...d, body: JSON.stringify({ ...sns, Message: sns.Message.replace('"Transient"', '"Permanent"').replace('"abuse"', '"fraud"').replace('"General"', '"Suppressed"') }) };
    },
    // SNS raw message delivery posts the SES JSON itself, with no signature
    unsign: (d) => ({ ...d, body: JSON.parse(d.body).Message, headers: { ...json, 'x-amz-sns-rawdelivery': 'true' } }),
  };
}

/** Postmark sends the webhook's HTTP Basic credentials; it signs nothing, so tampering means forged credentials. */
function postmarkCase(webhookDriver = 'postmark'): DriverCase {
  const auth = (pass: string) => `Basic ${Buffer.from(`hook:${pass}`).toString('base64')}`;
  return {
    name: webhookDriver,
    options: { webhookDriver, postmarkWebhookUsername: 'hook', postmarkWebhookPassword: 'pa55' },
    deliver(kind, email) {
      const messageId = `883953f4-6105-42a2-a16a-${String(next()).padStart(12, '0')}`;
      // https://postmarkapp.com/developer/webhooks/bounce-webhook and
      // https://postmarkapp.com/developer/webhooks/spam-complaint-webhook (SoftBounce is TypeCode 4096:
      // https://postmarkapp.com/developer/api/bounce-api#bounce-types)
      const type = { bounce: ['HardBounce', 1, 'Hard bounce'], soft_bounce: ['SoftBounce', 4096, 'Soft bounce'], complaint: ['SpamComplaint', 512, 'Spam complaint'] }[kind];
      const body = {
        RecordType: kind === 'complaint' ? 'SpamComplaint' : 'Bounce',
        MessageStream: 'outbound',
        ID: 42_000 + seq,
        Type: type[0],
        TypeCode: type[1],
        Name: type[2],
        Tag: 'Test',
        MessageID: messageId,
        ServerID: 23,
        Description: '',
        Details: 'Test details',
        Email: email,
        From: 'news@example.com',
        BouncedAt: '2019-11-05T16:33:54.9070259Z',
        DumpAvailable: true,
        Inactive: kind !== 'soft_bounce',
        CanActivate: true,
        Subject: 'Test subject',
      };
      return { body: JSON.stringify(body), headers: { ...json, authorization: auth('pa55') }, messageId };
    },
    tamper: (d) => ({ ...d, headers: { ...d.headers, authorization: auth('pa56') } }),
    unsign: (d) => ({ ...d, headers: json }),
  };
}

/** SendGrid's Signed Event Webhook: ECDSA P-256 over the timestamp header and the exact body. */
function sendgridCase(): DriverCase {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const TS = 'x-twilio-email-event-webhook-timestamp';
  const SIG = 'x-twilio-email-event-webhook-signature';
  return {
    name: 'sendgrid',
    options: { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') },
    deliver(kind, email) {
      const messageId = `<14c5d75ce93.dfd.${next()}@ismtpd-555>`;
      // https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event (bounce with type
      // bounce or blocked; spamreport)
      const event = {
        email,
        timestamp: now(),
        'smtp-id': messageId,
        event: kind === 'complaint' ? 'spamreport' : 'bounce',
        category: 'cat facts',
        sg_event_id: `sg_event_${seq}_${randomBytes(4).toString('hex')}`,
        sg_message_id: `14c5d75ce93.dfd.${seq}.filter0001.16648.5515E0B88.0`,
        ...(kind === 'complaint' ? {} : { reason: kind === 'bounce' ? '500 unknown recipient' : '421 try again later', status: kind === 'bounce' ? '5.0.0' : '4.0.0', type: kind === 'bounce' ? 'bounce' : 'blocked' }),
      };
      const body = JSON.stringify([event]);
      const ts = String(now());
      return { body, headers: { ...json, [TS]: ts, [SIG]: sign('sha256', Buffer.from(ts + body), privateKey).toString('base64') }, messageId };
    },
    tamper: (d) => ({ ...d, body: d.body.replace('"cat facts"', '"dog facts"') }),
    unsign: (d) => ({ ...d, headers: json }),
  };
}

/** Mailgun signs timestamp + token (HMAC-SHA256); the token is what a forger must change. */
function mailgunCase(): DriverCase {
  const key = 'key-contract-signing';
  const signature = (timestamp: string, token: string) => createHmac('sha256', key).update(timestamp + token).digest('hex');
  return {
    name: 'mailgun',
    options: { webhookDriver: 'mailgun', mailgunWebhookSigningKey: key },
    deliver(kind, email) {
      const messageId = `20180812214658.${next()}.0DF563D0B3597700@example.org`;
      const timestamp = String(now());
      const token = randomBytes(25).toString('hex');
      // https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-payloads (failed
      // with severity permanent or temporary; complained)
      const eventData =
        kind === 'complaint'
          ? { event: 'complained', id: `ncV2XwymRUKbPek_MIM-Gw${seq}`, timestamp: Number(timestamp), 'log-level': 'warn', recipient: email, message: { headers: { to: email, 'message-id': messageId, from: 'news@example.org', subject: 'Test' } } }
          : {
              event: 'failed',
              id: `G9Bn5sl1TC6nu79C8C0bwg${seq}`,
              timestamp: Number(timestamp),
              'log-level': kind === 'bounce' ? 'error' : 'warn',
              severity: kind === 'bounce' ? 'permanent' : 'temporary',
              reason: kind === 'bounce' ? 'bounce' : 'generic',
              recipient: email,
              message: { headers: { to: email, 'message-id': messageId, from: 'news@example.org', subject: 'Test' } },
              'delivery-status': kind === 'bounce' ? { code: 550, message: '5.1.1 The email account that you tried to reach does not exist', 'attempt-no': 1 } : { code: 452, message: 'Mailbox full', 'attempt-no': 1, 'retry-seconds': 600 },
            };
      return { body: JSON.stringify({ signature: { timestamp, token, signature: signature(timestamp, token) }, 'event-data': eventData }), headers: json, messageId };
    },
    tamper(d) {
      const body = JSON.parse(d.body);
      return { ...d, body: JSON.stringify({ ...body, signature: { ...body.signature, token: randomBytes(25).toString('hex') } }) };
    },
    unsign(d) {
      const { signature: _signature, ...unsigned } = JSON.parse(d.body);
      return { ...d, body: JSON.stringify(unsigned) };
    },
  };
}

const CASES: DriverCase[] = [sesCase(), postmarkCase(), sendgridCase(), mailgunCase(), postmarkCase('PostmarkWebhookDriver')];

const KINDS: Kind[] = ['bounce', 'soft_bounce', 'complaint'];
const request = (d: Delivery) => webhookRequest(d.body, d.headers);

for (const c of CASES) {
  describe(`webhook driver contract: ${c.name}`, () => {
    let driver: WebhookDriverInterface;
    before(async () => {
      const { fetch, clock, ...options } = c.options;
      const config = await loadConfig(options, { configFile: false, env: {} });
      const log = pino({ level: 'silent' });
      const resolved = await resolveWebhookDriver(config, { fetch: fetch ?? globalThis.fetch, now: () => new Date(clock?.now() ?? Date.now()), log, cwd: process.cwd() });
      driver = resolved!.driver;
    });

    test('a signed delivery verifies', async () => {
      assert.equal(await driver.verifySignature(request(c.deliver('bounce', 'signed@example.com'))), true);
    });

    test('a delivery altered after signing does not verify', async () => {
      for (const kind of KINDS) assert.equal(await driver.verifySignature(request(c.tamper(c.deliver(kind, 'tampered@example.com')))), false, kind);
    });

    test('an unsigned delivery does not verify', async () => {
      for (const kind of KINDS) assert.equal(await driver.verifySignature(request(c.unsign(c.deliver(kind, 'unsigned@example.com')))), false, kind);
    });

    for (const kind of KINDS) {
      test(`a ${kind.replace('_', ' ')} parses to { type, email, message_id }`, async () => {
        const d = c.deliver(kind, 'Parsed.Reader@example.com');
        assert.equal(await driver.isSubscriptionConfirmation(request(d)), false);
        const events = await driver.parseEvents(request(d));
        assert.deepEqual(
          events.map((e) => ({ type: e.type, email: e.email, message_id: e.message_id })),
          [{ type: kind, email: 'Parsed.Reader@example.com', message_id: d.messageId }],
        );
      });
    }
  });
}

for (const c of CASES) {
  forEachEngine(`webhook driver contract through POST /notify/webhook: ${c.name}`, (h) => {
    const notify = useNotify(h, c.options);
    const post = (d: Delivery) => call(notify(), '/notify/webhook', { method: 'POST', body: d.body, headers: d.headers });
    const receipts = async () => (await notify().context.store.db.selectFrom('notify_webhook_receipts').select('message_id').execute()).length;
    const eventsOf = (contactId: number) => notify().context.store.db.selectFrom('notify_events').select(['type', 'send_id']).where('contact_id', '=', contactId).execute();

    test('a tampered or unsigned delivery gets 403 and changes nothing', async () => {
      const contact = await notify().contacts.upsert({ email: `forged${next()}@example.com` });
      const before = await receipts();
      for (const forged of [c.tamper(c.deliver('bounce', contact.email)), c.unsign(c.deliver('bounce', contact.email))]) {
        assert.equal((await post(forged)).status, 403);
      }
      assert.equal((await notify().contacts.get(contact.id))?.status, 'subscribed');
      assert.deepEqual(await eventsOf(contact.id), []);
      assert.equal(await receipts(), before);
    });

    test('a redelivered bounce is applied once: one receipt, one status change, one event', async () => {
      const contact = await notify().contacts.upsert({ email: `replayed${next()}@example.com` });
      const d = c.deliver('bounce', contact.email);
      const send = await notify().context.store.db
        .insertInto('notify_sends')
        .values({ token: randomBytes(16).toString('base64url'), contact_id: contact.id, to_email: contact.email, subject: 'Hi', status: 'sent', message_id: d.messageId, created_at: 1, updated_at: 1, sent_at: 1 })
        .returning('id')
        .executeTakeFirstOrThrow();
      const fired: unknown[] = [];
      const off = notify().on('notify:contact.bounced', (p) => void fired.push(p));
      const before = await receipts();
      try {
        const first = await post(d);
        assert.equal(first.status, 200);
        assert.deepEqual(await first.json(), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
        const again = await post(d);
        assert.equal(again.status, 200);
        assert.deepEqual(await again.json(), { received: 1, applied: 0, duplicates: 1, unknownContacts: 0 });
      } finally {
        off();
      }
      assert.equal(await receipts(), before + 1);
      assert.equal((await notify().contacts.get(contact.id))?.status, 'bounced');
      assert.equal(fired.length, 1);
      assert.deepEqual(
        (await eventsOf(contact.id)).map((e) => ({ type: e.type, send_id: Number(e.send_id) })),
        [{ type: 'bounce', send_id: Number(send.id) }],
      );
    });
  });
}
