import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { manualClock } from '../../src/core/clock.ts';
import type { CreateNotifyOptions, Notify } from '../../src/notify.ts';
import { createNotify } from '../../src/notify.ts';
import { isParsedWebhookEvent, type WebhookDriverInterface } from '../../src/webhooks/contract.ts';
import { MailgunWebhookDriver } from '../../src/webhooks/drivers/mailgun.ts';
import { PostmarkWebhookDriver } from '../../src/webhooks/drivers/postmark.ts';
import { SendGridWebhookDriver } from '../../src/webhooks/drivers/sendgrid.ts';
import { SesSnsWebhookDriver } from '../../src/webhooks/drivers/ses-sns.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { fakeFetch, REAL_FIXTURES, realFixture, sesBounce, signedSns, TEST_NOW, TEST_TOPIC, webhookRequest } from '../webhooks/helpers.ts';
import { assertSafeResponse, fuzzParams, hostileOrHuge, hostileString } from './helpers/fuzz.ts';

const VICTIM = 'victim@example.com';
const sg = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const sgKey = sg.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

/** Bodies shaped like each provider's, filled with junk: the parsers' interesting paths get reached. */
const junkValue = fc.oneof(hostileString(40), fc.integer(), fc.constant(null), fc.constant(VICTIM), fc.boolean(), fc.array(fc.constant(VICTIM), { maxLength: 3 }));
const shaped = fc.oneof(
  fc.record({ Type: fc.constantFrom('Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation', 'x'), Message: fc.oneof(junkValue, fc.constant(sesBounce('Permanent', [VICTIM]))), MessageId: junkValue, TopicArn: fc.oneof(junkValue, fc.constant(TEST_TOPIC)), Timestamp: fc.oneof(junkValue, fc.constant(new Date(TEST_NOW).toISOString())), SignatureVersion: fc.constantFrom('1', '2', 1, '3'), Signature: junkValue, SigningCertURL: junkValue, Token: junkValue, SubscribeURL: junkValue }),
  fc.record({ RecordType: fc.constantFrom('Bounce', 'SpamComplaint', 'x'), Type: fc.constantFrom('HardBounce', 'SoftBounce', 'SpamComplaint', 'x'), Email: junkValue, ID: junkValue, MessageID: junkValue }),
  fc.array(fc.record({ event: fc.constantFrom('bounce', 'spamreport', 'x'), type: junkValue, email: junkValue, sg_event_id: junkValue }), { maxLength: 4 }),
  fc.record({ signature: fc.oneof(junkValue, fc.record({ timestamp: junkValue, token: junkValue, signature: junkValue })), 'event-data': fc.record({ event: fc.constantFrom('failed', 'complained', 'x'), severity: junkValue, recipient: junkValue }) }),
).map((v) => JSON.stringify(v));
const body = fc.oneof(hostileOrHuge(), fc.json(), shaped);
const headers = fc.dictionary(
  fc.constantFrom('content-type', 'authorization', 'x-amz-sns-message-type', 'x-amz-sns-rawdelivery', 'x-twilio-email-event-webhook-signature', 'x-twilio-email-event-webhook-timestamp'),
  fc.oneof(fc.stringMatching(/^[\x20-\x7e]{0,60}$/), fc.constant('Basic aG9vazpwYTU1')),
);

function drivers(): [string, WebhookDriverInterface][] {
  return [
    ['ses', new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: () => new Date(TEST_NOW), topicArns: [TEST_TOPIC] })],
    ['postmark', new PostmarkWebhookDriver({ username: 'hook', password: 'pa55' })],
    ['sendgrid', new SendGridWebhookDriver({ publicKey: sgKey })],
    ['mailgun', new MailgunWebhookDriver({ signingKey: 'mg-key' })],
  ];
}

describe('webhook drivers under fuzzing', () => {
  for (const [name, driver] of drivers()) {
    test(`${name}: verifySignature answers a boolean, parseEvents well-formed events, nothing throws`, async () => {
      await fc.assert(
        fc.asyncProperty(body, headers, async (b, h) => {
          const req = webhookRequest(b, h);
          const verified = await driver.verifySignature(req);
          assert.equal(typeof verified, 'boolean');
          if (name !== 'postmark') assert.equal(verified, false, 'junk is never signed');
          assert.equal(typeof (await driver.isSubscriptionConfirmation(req)), 'boolean');
          const events = await driver.parseEvents(req);
          assert.ok(Array.isArray(events) && events.every(isParsedWebhookEvent));
        }),
        fuzzParams(),
      );
    });
  }

  test('ses: a real signed message with any one signed field changed never verifies', async () => {
    const signedFields = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type', 'Signature', 'SignatureVersion'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...REAL_FIXTURES), fc.constantFrom(...signedFields), hostileString(60), async (name, field, value) => {
        const fx = realFixture(name);
        fc.pre(fx.json[field] !== value);
        const driver = new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: fx.now });
        assert.equal(await driver.verifySignature(webhookRequest(JSON.stringify({ ...fx.json, [field]: value }))), false);
      }),
      fuzzParams(100),
    );
  });
});

describe('POST /notify/webhook under fuzzing: no 5xx, nothing applied without a valid signature', () => {
  const instances: [string, Notify][] = [];
  const cleanups: (() => void)[] = [];
  before(async () => {
    const configs: [string, Partial<CreateNotifyOptions>][] = [
      ['ses', { webhookDriver: 'ses', snsTopicArns: [TEST_TOPIC], fetch: fakeFetch().fetch, clock: manualClock(TEST_NOW) }],
      ['postmark', { webhookDriver: 'postmark', postmarkWebhookUsername: 'hook', postmarkWebhookPassword: 'right-password' }],
      ['sendgrid', { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: sgKey }],
      ['mailgun', { webhookDriver: 'mailgun', mailgunWebhookSigningKey: 'mg-key' }],
    ];
    for (const [name, extra] of configs) {
      const db = freshDatabaseUrl('sqlite');
      cleanups.push(db.cleanup);
      const notify = await createNotify(testOptions(db.url, extra));
      await notify.contacts.upsert({ email: VICTIM });
      instances.push([name, notify]);
    }
  });
  after(async () => {
    for (const [, n] of instances) await n.close();
    for (const c of cleanups) c();
  });

  test('junk bodies and headers against every driver', async () => {
    for (const [name, notify] of instances) {
      await fc.assert(
        fc.asyncProperty(body, headers, async (b, h) => {
          const res = await call(notify, '/notify/webhook', { method: 'POST', body: b, headers: h });
          await assertSafeResponse(res, name);
          assert.equal(res.status, 403, `${name}: ${res.status}`);
        }),
        fuzzParams(150),
      );
      const db = notify.context.store.db;
      assert.equal((await db.selectFrom('notify_events').select('id').execute()).length, 0, `${name}: no event rows`);
      assert.equal((await db.selectFrom('notify_webhook_receipts').select('message_id').execute()).length, 0, `${name}: no receipts`);
      assert.equal((await notify.contacts.get(VICTIM))?.status, 'subscribed');
    }
  });

  test('validly signed deliveries with junk inside never 5xx', async () => {
    const [, ses] = instances.find(([n]) => n === 'ses')!;
    const [, mailgun] = instances.find(([n]) => n === 'mailgun')!;
    const [, sendgrid] = instances.find(([n]) => n === 'sendgrid')!;
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileOrHuge(), fc.json(), shaped), async (inner) => {
        const snsBody = JSON.stringify(signedSns({ Type: 'Notification', Message: inner }));
        await assertSafeResponse(await call(ses, '/notify/webhook', { method: 'POST', body: snsBody }), 'ses signed');
        const token = `t${createHmac('sha256', 'x').update(inner).digest('hex').slice(0, 40)}`;
        let eventData: unknown;
        try {
          eventData = JSON.parse(inner);
        } catch {
          eventData = inner;
        }
        const mg = JSON.stringify({ signature: { timestamp: '1700000000', token, signature: createHmac('sha256', 'mg-key').update(`1700000000${token}`).digest('hex') }, 'event-data': eventData });
        await assertSafeResponse(await call(mailgun, '/notify/webhook', { method: 'POST', body: mg }), 'mailgun signed');
        const sgHeaders = { 'x-twilio-email-event-webhook-timestamp': '1700000000', 'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(`1700000000${inner}`), sg.privateKey).toString('base64') };
        await assertSafeResponse(await call(sendgrid, '/notify/webhook', { method: 'POST', body: inner, headers: sgHeaders }), 'sendgrid signed');
      }),
      fuzzParams(100),
    );
  });
});
