import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { MailgunWebhookDriver, PostmarkWebhookDriver, SendGridWebhookDriver, SesSnsWebhookDriver } from '../../src/index.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';
import { fakeFetch, mailgunBody, providerExample, sendgridHeaders, signedSns, TEST_CERT, TEST_CERT_URL, TEST_NOW, TEST_TOPIC, webhookRequest } from './helpers.ts';

/**
 * The providers' own documented example payloads (fixtures/README.md names each source), through
 * the drivers and through POST /notify/webhook, next to the payloads the other tests write.
 */

const json = (name: string) => JSON.parse(providerExample(name));
const basic = `Basic ${Buffer.from('hook:pa55').toString('base64')}`;
const MAILGUN_KEY = 'mailgun-test-signing-key';
const sesMessage = (name: string) => JSON.stringify(signedSns({ Type: 'Notification', Message: providerExample(name) }));
const sendgridKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const sendgridPublicKey = sendgridKey.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const realSendgrid = json('sendgrid/signed-dropped.json') as { publicKey: string; timestamp: string; signature: string; body: string };
const realSendgridHeaders = { 'content-type': 'application/json', 'x-twilio-email-event-webhook-timestamp': realSendgrid.timestamp, 'x-twilio-email-event-webhook-signature': realSendgrid.signature };
let token = 0;
/** Each Mailgun delivery has its own token (it is the delivery's id). */
const mailgun = (name: string) => mailgunBody(json(name), MAILGUN_KEY, `doctoken${String(++token).padStart(12, '0')}`);
const shape = (events: { type: string; email: string; message_id: string }[]) => events.map(({ type, email, message_id }) => ({ type, email, message_id }));

describe('documented payloads through the drivers', () => {
  test('SES (SNS-wrapped): bounces with and without a DSN, complaints with and without a feedback report; a delivery carries nothing', async () => {
    const driver = new SesSnsWebhookDriver({ fetch: fakeFetch({ [TEST_CERT_URL]: TEST_CERT }).fetch, now: () => new Date(TEST_NOW), topicArns: [TEST_TOPIC] });
    const parse = async (name: string) => {
      const request = webhookRequest(sesMessage(name), { 'x-amz-sns-message-type': 'Notification' });
      assert.equal(await driver.verifySignature(request), true, name);
      return shape(driver.parseEvents(request));
    };
    assert.deepEqual(await parse('ses/bounce-with-dsn.json'), [{ type: 'bounce', email: 'jane@example.com', message_id: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000' }]);
    assert.deepEqual(await parse('ses/bounce-without-dsn.json'), [
      { type: 'bounce', email: 'jane@example.com', message_id: '00000137860315fd-34208509-5b74-41f3-95c5-22c1edc3c924-000000' },
      { type: 'bounce', email: 'richard@example.com', message_id: '00000137860315fd-34208509-5b74-41f3-95c5-22c1edc3c924-000000' },
    ]);
    assert.deepEqual(await parse('ses/complaint-with-feedback.json'), [{ type: 'complaint', email: 'richard@example.com', message_id: '000001378603177f-7a5433e7-8edb-42ae-af10-f0181f34d6ee-000000' }]);
    assert.deepEqual(await parse('ses/complaint-without-feedback.json'), [{ type: 'complaint', email: 'richard@example.com', message_id: '0000013786031775-163e3910-53eb-4c8e-a04a-f29debf88a84-000000' }]);
    assert.deepEqual(await parse('ses/delivery.json'), []);
  });

  test('Postmark: bounce, spam complaint and SubscriptionChange webhooks', () => {
    const driver = new PostmarkWebhookDriver({ username: 'hook', password: 'pa55' });
    const parse = (name: string) => {
      const request = webhookRequest(providerExample(name), { authorization: basic });
      assert.equal(driver.verifySignature(request), true);
      return driver.parseEvents(request);
    };
    assert.deepEqual(parse('postmark/bounce.json'), [{ type: 'bounce', email: 'john@example.com', message_id: '883953f4-6105-42a2-a16a-77a8eac79483', id: 'Bounce:42' }]);
    assert.deepEqual(parse('postmark/spam-complaint.json'), [{ type: 'complaint', email: 'john@example.com', message_id: '00000000-0000-0000-0000-000000000000', id: 'SpamComplaint:42' }]);
    assert.deepEqual(parse('postmark/subscription-change.json'), [
      { type: 'bounce', email: 'bounced-address@wildbit.com', message_id: '883953f4-6105-42a2-a16a-77a8eac79483', id: 'SubscriptionChange:2020-02-01T10:53:34.416071Z:bounced-address@wildbit.com' },
    ]);
  });

  test('SendGrid: bounce, blocked, dropped and spamreport map to events; deferred and delivered carry nothing', () => {
    const driver = new SendGridWebhookDriver({ publicKey: sendgridPublicKey });
    const parse = (name: string) => {
      const body = providerExample(name);
      const request = webhookRequest(body, sendgridHeaders(body, sendgridKey.privateKey));
      assert.equal(driver.verifySignature(request), true, name);
      return shape(driver.parseEvents(request));
    };
    const at = (type: string) => [{ type, email: 'example@test.com', message_id: '<14c5d75ce93.dfd.64b469@ismtpd-555>' }];
    assert.deepEqual(parse('sendgrid/bounce.json'), at('bounce'));
    assert.deepEqual(parse('sendgrid/blocked.json'), at('soft_bounce'));
    assert.deepEqual(parse('sendgrid/dropped.json'), at('bounce'));
    assert.deepEqual(parse('sendgrid/spamreport.json'), at('complaint'));
    assert.deepEqual(parse('sendgrid/deferred.json'), []);
    assert.deepEqual(parse('sendgrid/delivered.json'), []);
  });

  test("SendGrid: a batch signed by SendGrid itself verifies with SendGrid's key; one changed byte or header does not", () => {
    const driver = new SendGridWebhookDriver({ publicKey: realSendgrid.publicKey });
    const request = webhookRequest(realSendgrid.body, realSendgridHeaders);
    assert.equal(driver.verifySignature(request), true);
    assert.deepEqual(driver.parseEvents(request), [
      { type: 'bounce', email: 'hello@world.com', message_id: '<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>', id: 'ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA' },
    ]);
    assert.equal(driver.verifySignature(webhookRequest(realSendgrid.body.trimEnd(), realSendgridHeaders)), false, 'without the trailing CRLF it signed');
    assert.equal(driver.verifySignature(webhookRequest(realSendgrid.body.replace('hello@world.com', 'hellO@world.com'), realSendgridHeaders)), false);
    assert.equal(driver.verifySignature(webhookRequest(realSendgrid.body, { ...realSendgridHeaders, 'x-twilio-email-event-webhook-timestamp': '1600112503' })), false);
    assert.equal(new SendGridWebhookDriver({ publicKey: sendgridPublicKey }).verifySignature(request), false, 'another key');
  });

  test('Mailgun: failed permanent and temporary, complained; delivered carries nothing', () => {
    const driver = new MailgunWebhookDriver({ signingKey: MAILGUN_KEY });
    const parse = (name: string) => {
      const request = webhookRequest(mailgun(name));
      assert.equal(driver.verifySignature(request), true, name);
      return shape(driver.parseEvents(request));
    };
    assert.deepEqual(parse('mailgun/failed-permanent.json'), [{ type: 'bounce', email: 'recipient@example.com', message_id: '20130822185902.31528.73196@samples.mailgun.org' }]);
    assert.deepEqual(parse('mailgun/failed-temporary.json'), [{ type: 'soft_bounce', email: 'bar@example.com', message_id: '20130813230036.10303.40433@samples.mailgun.org' }]);
    assert.deepEqual(parse('mailgun/complained.json'), [{ type: 'complaint', email: 'foo@example.com', message_id: '20130718032413.263EE2E0926@example.com' }]);
    assert.deepEqual(parse('mailgun/delivered.json'), []);
  });
});

async function statusOf(notify: Notify, email: string) {
  return (await notify.contacts.get(email))?.status;
}

async function eventTypes(notify: Notify, email: string) {
  const contact = await notify.contacts.get(email);
  const rows = await notify.context.store.db.selectFrom('notify_events').select(['type', 'send_id']).where('contact_id', '=', contact!.id).orderBy('id').execute();
  return rows.map((r) => (r.send_id === null ? r.type : `${r.type} (send ${r.send_id})`));
}

/** A campaign send to `email`, stored with the message id the provider's API or SMTP answer gave notify. */
async function sentTo(notify: Notify, email: string, messageId: string) {
  const campaignId = await insertCampaign(notify.context.store);
  const send = await insertSend(notify, { email, campaignId });
  await notify.context.store.db.updateTable('notify_sends').set({ message_id: messageId }).where('id', '=', send.id).execute();
  return { ...send, campaignId };
}

async function applied(res: Response) {
  assert.equal(res.status, 200);
  return res.json();
}

forEachEngine('documented SES payloads through POST /notify/webhook', (h) => {
  const notify = useNotify(h, { webhookDriver: 'ses', snsTopicArns: [TEST_TOPIC], fetch: fakeFetch({ [TEST_CERT_URL]: TEST_CERT }).fetch, clock: manualClock(TEST_NOW) });
  const post = (name: string) => call(notify(), '/notify/webhook', { method: 'POST', body: sesMessage(name), headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' } });

  test('a bounce with a DSN bounces jane and counts for her send; a complaint complains richard; a delivery changes nothing', async () => {
    for (const email of ['jane@example.com', 'mary@example.com', 'richard@example.com']) await notify().contacts.upsert({ email });
    const send = await sentTo(notify(), 'jane@example.com', '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000');
    assert.deepEqual(await applied(await post('ses/bounce-with-dsn.json')), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await applied(await post('ses/complaint-without-feedback.json')), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await applied(await post('ses/delivery.json')), { received: 0, applied: 0, duplicates: 0, unknownContacts: 0 });
    assert.equal(await statusOf(notify(), 'jane@example.com'), 'bounced');
    assert.equal(await statusOf(notify(), 'richard@example.com'), 'complained');
    assert.equal(await statusOf(notify(), 'mary@example.com'), 'subscribed');
    assert.deepEqual(await eventTypes(notify(), 'jane@example.com'), [`bounce (send ${send.id})`]);
    assert.equal((await notify().campaigns.getCampaignReport(send.campaignId)).bounced, 1);
  });
});

forEachEngine('documented Postmark payloads through POST /notify/webhook', (h) => {
  const notify = useNotify(h, { webhookDriver: 'postmark', postmarkWebhookUsername: 'hook', postmarkWebhookPassword: 'pa55' });
  const post = (name: string) => call(notify(), '/notify/webhook', { method: 'POST', body: providerExample(name), headers: { 'content-type': 'application/json', authorization: basic } });

  test('the bounce then the spam complaint for john; the SubscriptionChange bounces its recipient once', async () => {
    await notify().contacts.upsert({ email: 'john@example.com' });
    await notify().contacts.upsert({ email: 'bounced-address@wildbit.com' });
    const send = await sentTo(notify(), 'john@example.com', '883953f4-6105-42a2-a16a-77a8eac79483');
    await applied(await post('postmark/bounce.json'));
    assert.equal(await statusOf(notify(), 'john@example.com'), 'bounced');
    await applied(await post('postmark/spam-complaint.json'));
    assert.equal(await statusOf(notify(), 'john@example.com'), 'complained');
    assert.deepEqual(await eventTypes(notify(), 'john@example.com'), [`bounce (send ${send.id})`, 'complaint']);
    assert.deepEqual(await applied(await post('postmark/subscription-change.json')), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await applied(await post('postmark/subscription-change.json')), { received: 1, applied: 0, duplicates: 1, unknownContacts: 0 });
    assert.equal(await statusOf(notify(), 'bounced-address@wildbit.com'), 'bounced');
    assert.deepEqual(await eventTypes(notify(), 'bounced-address@wildbit.com'), ['bounce']);
  });
});

forEachEngine('documented SendGrid payloads through POST /notify/webhook', (h) => {
  const notify = useNotify(h, { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: sendgridPublicKey });
  const signedBySendGrid = useNotify(h, { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: realSendgrid.publicKey });
  const post = (name: string) => {
    const body = providerExample(name);
    return call(notify(), '/notify/webhook', { method: 'POST', body, headers: sendgridHeaders(body, sendgridKey.privateKey) });
  };

  test('dropped (Bounced Address) bounces the contact and counts for its send, spamreport complains it; deferred and delivered change nothing', async () => {
    await notify().contacts.upsert({ email: 'example@test.com' });
    const send = await sentTo(notify(), 'example@test.com', '<14c5d75ce93.dfd.64b469@ismtpd-555>');
    for (const name of ['sendgrid/deferred.json', 'sendgrid/delivered.json']) assert.deepEqual(await applied(await post(name)), { received: 0, applied: 0, duplicates: 0, unknownContacts: 0 });
    assert.equal(await statusOf(notify(), 'example@test.com'), 'subscribed');
    assert.deepEqual(await applied(await post('sendgrid/dropped.json')), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.equal(await statusOf(notify(), 'example@test.com'), 'bounced');
    await applied(await post('sendgrid/spamreport.json'));
    assert.equal(await statusOf(notify(), 'example@test.com'), 'complained');
    assert.deepEqual(await eventTypes(notify(), 'example@test.com'), [`bounce (send ${send.id})`, `complaint (send ${send.id})`]);
  });

  test('the batch SendGrid signed: 200 and hello@world.com bounced with its key; 403 and nothing applied with a changed byte', async () => {
    await signedBySendGrid().contacts.upsert({ email: 'hello@world.com' });
    const post = (body: string) => call(signedBySendGrid(), '/notify/webhook', { method: 'POST', body, headers: realSendgridHeaders });
    assert.equal((await post(realSendgrid.body.replace('Bounced Address', 'Bounced address'))).status, 403);
    assert.equal(await statusOf(signedBySendGrid(), 'hello@world.com'), 'subscribed');
    assert.deepEqual(await applied(await post(realSendgrid.body)), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.equal(await statusOf(signedBySendGrid(), 'hello@world.com'), 'bounced');
  });
});

forEachEngine('documented Mailgun payloads through POST /notify/webhook', (h) => {
  const notify = useNotify(h, { webhookDriver: 'mailgun', mailgunWebhookSigningKey: MAILGUN_KEY });
  const post = (name: string) => call(notify(), '/notify/webhook', { method: 'POST', body: mailgun(name), headers: { 'content-type': 'application/json' } });

  test('failed permanent bounces its recipient and counts for the send, temporary writes a soft bounce only, complained complains; delivered changes nothing', async () => {
    for (const email of ['recipient@example.com', 'bar@example.com', 'foo@example.com']) await notify().contacts.upsert({ email });
    const send = await sentTo(notify(), 'recipient@example.com', '<20130822185902.31528.73196@samples.mailgun.org>');
    for (const name of ['mailgun/failed-permanent.json', 'mailgun/failed-temporary.json', 'mailgun/complained.json', 'mailgun/delivered.json']) await applied(await post(name));
    assert.equal(await statusOf(notify(), 'recipient@example.com'), 'bounced');
    assert.deepEqual(await eventTypes(notify(), 'recipient@example.com'), [`bounce (send ${send.id})`]);
    assert.equal(await statusOf(notify(), 'bar@example.com'), 'subscribed');
    assert.deepEqual(await eventTypes(notify(), 'bar@example.com'), ['soft_bounce']);
    assert.equal(await statusOf(notify(), 'foo@example.com'), 'complained');
    assert.equal((await notify().campaigns.getCampaignReport(send.campaignId)).bounced, 1);
  });
});
