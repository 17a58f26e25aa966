import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SesSnsWebhookDriver } from '../../src/index.ts';
import {
  fakeFetch,
  REAL_CERT,
  REAL_CERT_URL,
  REAL_FIXTURES,
  realFixture,
  sesBounce,
  sesComplaint,
  signedSns,
  subscriptionConfirmation,
  TEST_CERT,
  TEST_CERT_URL,
  TEST_NOW,
  TEST_REGION,
  TEST_TOPIC,
  webhookRequest,
} from './helpers.ts';

const testNow = () => new Date(TEST_NOW);
const json = (m: Record<string, unknown>) => JSON.stringify(m);

describe('SesSnsWebhookDriver: real SNS-signed messages', () => {
  test('all four fixtures verify (SignatureVersion 1 and 2, with and without Subject); one certificate fetch', async () => {
    const f = fakeFetch();
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: () => new Date('2022-07-28T23:00:00Z'), maxAgeMs: 2 * 3_600_000 });
    for (const name of REAL_FIXTURES) {
      const fx = realFixture(name);
      const d = new SesSnsWebhookDriver({ fetch: f.fetch, now: fx.now, topicArns: [fx.json.TopicArn] });
      assert.equal(await d.verifySignature(webhookRequest(fx.text, { 'content-type': 'text/plain; charset=UTF-8' })), true, name);
      assert.equal(await d.isSubscriptionConfirmation(webhookRequest(fx.text)), false);
      assert.deepEqual(await d.parseEvents(webhookRequest(fx.text)), [], 'a non-SES Message carries no events');
    }
    for (const name of REAL_FIXTURES) assert.equal(await driver.verifySignature(webhookRequest(realFixture(name).text)), true);
    assert.equal(f.calls.filter((c) => c.url === REAL_CERT_URL).length, 1 + REAL_FIXTURES.length, 'each driver fetched once; the shared one cached');
    assert.ok(f.calls.every((c) => c.init?.redirect === 'manual'), 'redirects are not followed');
  });

  test('any change to a signed field fails; unsigned fields do not matter', async () => {
    for (const name of ['notification-subject-v1.json', 'notification-subject-v2.json']) {
      const fx = realFixture(name);
      const driver = new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: fx.now });
      const variant = (patch: Record<string, unknown>) => driver.verifySignature(webhookRequest(json({ ...fx.json, ...patch })));
      assert.equal(await variant({ Message: 'Hello world!' }), false);
      assert.equal(await variant({ MessageId: fx.json.MessageId.replace(/.$/, '0') }), false);
      assert.equal(await variant({ Subject: 'Hello' }), false);
      assert.equal(await variant({ Subject: undefined }), false, 'a dropped Subject');
      assert.equal(await variant({ Timestamp: fx.json.Timestamp.replace(/\.\d+Z$/, '.000Z') }), false);
      assert.equal(await variant({ TopicArn: fx.json.TopicArn.replace(/.$/, '0') }), false);
      assert.equal(await variant({ SignatureVersion: fx.json.SignatureVersion === '1' ? '2' : '1' }), false);
      assert.equal(await variant({ SignatureVersion: '3' }), false);
      assert.equal(await variant({ Signature: `${fx.json.Signature[0] === 'A' ? 'B' : 'A'}${fx.json.Signature.slice(1)}` }), false);
      assert.equal(await variant({ Signature: '' }), false);
      assert.equal(await variant({ Message: 123 }), false, 'a non-string signed field');
      assert.equal(await variant({ UnsubscribeURL: 'https://example.com/' }), true, 'UnsubscribeURL is not signed');
      assert.equal(await variant({ Extra: 'x' }), true, 'unknown fields are not signed');
    }
  });

  test('the timestamp window: an old or future message is refused', async () => {
    const fx = realFixture('notification-v2.json');
    const at = Date.parse(fx.json.Timestamp);
    const check = (now: number) => new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: () => new Date(now) }).verifySignature(webhookRequest(fx.text));
    assert.equal(await check(at + 59 * 60_000), true);
    assert.equal(await check(at + 61 * 60_000), false, 'older than an hour');
    assert.equal(await check(at - 10 * 60_000), false, 'ten minutes in the future');
    assert.equal(await new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: fx.now, maxAgeMs: 30_000 }).verifySignature(webhookRequest(fx.text)), false, 'window is configurable');
  });

  test('certificate outside its validity at `now` is refused', async () => {
    const fx = realFixture('notification-v2.json');
    const later = new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: () => new Date('2022-08-18T00:30:00Z'), maxAgeMs: 3e10 });
    assert.equal(await later.verifySignature(webhookRequest(fx.text)), false);
  });
});

describe('SesSnsWebhookDriver: SigningCertURL', () => {
  const fx = realFixture('notification-v1.json');
  const bad = [
    REAL_CERT_URL.replace('https:', 'http:'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-east-2.amazonaws.com.evil.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-east-2.evil.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'evil.com.amazonaws.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.evil.com.amazonaws.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'evilsns.us-east-2.amazonaws.com'),
    // S3 hosts: anyone can put a .pem in a bucket
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 's3.amazonaws.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 's3.us-east-2.amazonaws.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'attacker-bucket.s3.us-east-2.amazonaws.com'),
    REAL_CERT_URL.replace('https://sns.us-east-2.amazonaws.com', 'https://s3.amazonaws.com/attacker-bucket'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-west-2.amazonaws.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-east-2.amazonaws.com.cn'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'SNS.us-east-2.amazonaws.com'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-east-2.amazonaws.com.'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-east-2.amazonaws.com:443'),
    REAL_CERT_URL.replace('sns.us-east-2.amazonaws.com', 'sns.us-east-2.amazonaws.com:8443'),
    REAL_CERT_URL.replace('https://', 'https://evil.com@'),
    REAL_CERT_URL.replace('https://', 'https://user:pw@'),
    REAL_CERT_URL.replace('https://sns.us-east-2.amazonaws.com', 'https://evil.com/sns.us-east-2.amazonaws.com'),
    `${REAL_CERT_URL}?x=1`,
    `${REAL_CERT_URL}?`,
    `${REAL_CERT_URL}#x`,
    REAL_CERT_URL.replace('SimpleNotificationService-', 'Other-'),
    REAL_CERT_URL.replace('.pem', '.pem/../evil.pem'),
    REAL_CERT_URL.replace('SimpleNotificationService', 'SimpleNotificationService%2F..'),
    REAL_CERT_URL.replace('https://', 'https:\\\\'),
    'https://sns.us-east-2.amazonaws.com/SimpleNotificationService-.pem',
    'not a url',
    '',
  ];
  for (const url of bad) {
    test(`refused without a fetch: ${JSON.stringify(url)}`, async () => {
      const f = fakeFetch({ '*': REAL_CERT });
      const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: fx.now });
      assert.equal(await driver.verifySignature(webhookRequest(json({ ...fx.json, SigningCertURL: url }))), false);
      assert.equal(f.calls.length, 0);
    });
  }

  test('a redirect, an error status, a thrown fetch, two certificates or junk: refused, and the failure is not cached', async () => {
    const answers: (() => Response | Promise<Response>)[] = [
      () => new Response(null, { status: 302, headers: { location: 'https://evil.com/cert.pem' } }),
      () => new Response('oops', { status: 500 }),
      () => Promise.reject(new TypeError('fetch failed')),
      () => new Response(`${REAL_CERT}\n${REAL_CERT}`, { status: 200 }),
      () => new Response('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', { status: 200 }),
      () => new Response(`-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n${REAL_CERT}`, { status: 200 }),
      () => Object.defineProperty(new Response(REAL_CERT, { status: 200 }), 'redirected', { value: true }),
    ];
    let next: () => Response | Promise<Response> = answers[0];
    const f = fakeFetch({ [REAL_CERT_URL]: () => next() });
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: fx.now });
    for (const [i, answer] of answers.entries()) {
      next = answer;
      assert.equal(await driver.verifySignature(webhookRequest(fx.text)), false, `answer ${i}`);
    }
    next = () => new Response(REAL_CERT, { status: 200 });
    assert.equal(await driver.verifySignature(webhookRequest(fx.text)), true, 'fetched again after the failures');
    assert.equal(await driver.verifySignature(webhookRequest(fx.text)), true);
    assert.equal(f.calls.length, answers.length + 1, 'the good certificate is cached');
  });

  test('the certificate cache is bounded: past the bound the oldest certificate is fetched again, the recent ones are not', async () => {
    const urls = Array.from({ length: 5 }, (_, i) => `https://sns.${TEST_REGION}.amazonaws.com/SimpleNotificationService-c${i}.pem`);
    const f = fakeFetch(Object.fromEntries(urls.map((url) => [url, TEST_CERT])));
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: testNow, certificateCacheSize: 2 });
    // signedSns signs the fields it sets, and SigningCertURL is not one of them.
    const verifyWith = (url: string) => driver.verifySignature(webhookRequest(json({ ...signedSns({ Type: 'Notification', Message: 'x' }), SigningCertURL: url })));
    const fetches = (url: string) => f.calls.filter((c) => c.url === url).length;
    for (const url of urls) assert.equal(await verifyWith(url), true, url);
    assert.deepEqual(urls.map(fetches), [1, 1, 1, 1, 1]);
    // Used again in the order 4, 3: 3 is now the most recently used, though fetched before 4.
    assert.equal(await verifyWith(urls[4]), true);
    assert.equal(await verifyWith(urls[3]), true);
    assert.deepEqual(urls.map(fetches), [1, 1, 1, 1, 1], 'the two most recent are still cached');
    assert.equal(await verifyWith(urls[0]), true);
    assert.equal(fetches(urls[0]), 2, 'the first, pushed out of the cache, is fetched again');
    assert.equal(await verifyWith(urls[3]), true);
    assert.equal(fetches(urls[3]), 1, 'the most recently used survives the new entry');
    assert.equal(await verifyWith(urls[4]), true);
    assert.equal(fetches(urls[4]), 2, 'the least recently used made room for it');
  });
});

describe('SesSnsWebhookDriver: topics, raw delivery, confirmation', () => {
  test('a topic outside topicArns is refused before any fetch', async () => {
    const f = fakeFetch();
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: testNow, topicArns: ['arn:aws:sns:eu-west-1:123456789012:other'] });
    const confirm = webhookRequest(json(subscriptionConfirmation()));
    assert.equal(await driver.verifySignature(confirm), false);
    await assert.rejects(async () => driver.confirmSubscription(confirm), /allowed topic/);
    assert.equal(f.calls.length, 0);
  });

  test('a subscription confirmation verifies and is confirmed at the topic region SNS host, never at SubscribeURL', async () => {
    const f = fakeFetch({ [TEST_CERT_URL]: TEST_CERT, 'https://sns.eu-west-1.amazonaws.com/?*': '<ConfirmSubscriptionResponse/>' });
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: testNow, topicArns: [TEST_TOPIC] });
    const req = webhookRequest(json(subscriptionConfirmation('https://evil.example/?Action=ConfirmSubscription&Token=tok123')));
    assert.equal(await driver.verifySignature(req), true);
    assert.equal(await driver.isSubscriptionConfirmation(req), true);
    await driver.confirmSubscription(req);
    const confirm = new URL(f.calls.at(-1)!.url);
    assert.equal(confirm.origin, `https://sns.${TEST_REGION}.amazonaws.com`);
    assert.equal(confirm.searchParams.get('Action'), 'ConfirmSubscription');
    assert.equal(confirm.searchParams.get('TopicArn'), TEST_TOPIC);
    assert.equal(confirm.searchParams.get('Token'), 'tok123');
    assert.equal(f.calls.at(-1)!.init?.redirect, 'manual');
    assert.ok(!f.calls.some((c) => c.url.includes('evil')));
  });

  test('a failing confirm call throws', async () => {
    const f = fakeFetch({ [TEST_CERT_URL]: TEST_CERT, 'https://sns.eu-west-1.amazonaws.com/?*': () => new Response('no', { status: 403 }) });
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: testNow });
    await assert.rejects(async () => driver.confirmSubscription(webhookRequest(json(subscriptionConfirmation()))), /answered 403/);
  });

  test('raw message delivery (unsigned SES JSON) and header mismatches are refused', async () => {
    const f = fakeFetch();
    const driver = new SesSnsWebhookDriver({ fetch: f.fetch, now: testNow });
    assert.equal(await driver.verifySignature(webhookRequest(sesBounce('Permanent', ['a@example.com']), { 'x-amz-sns-rawdelivery': 'true' })), false);
    assert.equal(await driver.verifySignature(webhookRequest(sesBounce('Permanent', ['a@example.com']))), false);
    const signed = json(signedSns({ Type: 'Notification', Message: sesBounce('Permanent', ['a@example.com']) }));
    assert.equal(await driver.verifySignature(webhookRequest(signed, { 'x-amz-sns-rawdelivery': 'true' })), false);
    assert.equal(await driver.verifySignature(webhookRequest(signed, { 'x-amz-sns-message-type': 'SubscriptionConfirmation' })), false);
    assert.equal(await driver.verifySignature(webhookRequest(signed, { 'x-amz-sns-topic-arn': 'arn:aws:sns:eu-west-1:123456789012:x' })), false);
    assert.equal(await driver.verifySignature(webhookRequest(signed, { 'x-amz-sns-message-type': 'Notification', 'x-amz-sns-topic-arn': TEST_TOPIC })), true);
  });
});

describe('SesSnsWebhookDriver: SES events', () => {
  const driver = new SesSnsWebhookDriver({ fetch: fakeFetch().fetch, now: testNow });
  const events = (message: string) => driver.parseEvents(webhookRequest(json(signedSns({ Type: 'Notification', Message: message }))));
  const types = async (message: string) => (await events(message)).map((e) => e.type);

  test('Permanent is bounce; Transient and Undetermined soft_bounce; every recipient; ids per recipient', async () => {
    const hard = await events(sesBounce('Permanent', ['a@example.com', '"B" <b@example.com>'], 'm-1'));
    assert.deepEqual(
      hard.map(({ type, email, message_id }) => ({ type, email, message_id })),
      [
        { type: 'bounce', email: 'a@example.com', message_id: 'm-1' },
        { type: 'bounce', email: 'b@example.com', message_id: 'm-1' },
      ],
    );
    assert.notEqual(hard[0].id, hard[1].id);
    assert.deepEqual(await types(sesBounce('Transient', ['a@example.com'])), ['soft_bounce']);
    assert.deepEqual(await types(sesBounce('Undetermined', ['a@example.com'])), ['soft_bounce']);
  });

  test('complaints, the event-publishing form, and what carries nothing', async () => {
    assert.deepEqual(await types(sesComplaint(['c@example.com'], 'm-2')), ['complaint']);
    assert.deepEqual(await types(sesBounce('Permanent', ['a@example.com'], 'm-3', 'eventType')), ['bounce']);
    assert.deepEqual((await events(sesComplaint(['c@example.com'], 'm-4', 'eventType'))).map((e) => e.email), ['c@example.com']);
    assert.deepEqual(await events(JSON.stringify({ notificationType: 'Delivery', mail: { messageId: 'x' }, delivery: {} })), []);
    assert.deepEqual(await events(JSON.stringify({ notificationType: 'Complaint', complaint: { complaintFeedbackType: 'not-spam', complainedRecipients: [{ emailAddress: 'c@example.com' }] } })), []);
    assert.deepEqual(await events(JSON.stringify({ notificationType: 'Bounce', bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'not an address' }, 7, null] } })), []);
    assert.deepEqual(await events('not json'), []);
    assert.deepEqual(await driver.parseEvents(webhookRequest(json(subscriptionConfirmation()))), []);
  });

  test('a web-standard Request works too, and stays readable for the caller', async () => {
    const body = json(signedSns({ Type: 'Notification', Message: sesBounce('Permanent', ['r@example.com']) }));
    const request = new Request('https://app.example/notify/webhook', { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    assert.equal(await driver.verifySignature(request), true);
    assert.equal(await driver.isSubscriptionConfirmation(request), false);
    assert.deepEqual((await driver.parseEvents(request)).map((e) => e.email), ['r@example.com']);
    assert.equal(await request.text(), body);
    assert.ok(Array.isArray(driver.parseEvents(webhookRequest(body))), 'with the route\'s request the answer is synchronous');
    assert.equal(driver.isSubscriptionConfirmation(webhookRequest(body)), false);
  });
});
