import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { isNotifyError } from '../../src/errors.ts';
import { SesSnsWebhookDriver } from '../../src/index.ts';
import type { Notify } from '../../src/notify.ts';
import { isTrustedCertUrl, SigningCertificates } from '../../src/webhooks/sns/certificates.ts';
import { parseTopicArn, snsHost } from '../../src/webhooks/sns/message.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { fakeFetch, sesBounce, sesComplaint, signedSns, subscriptionConfirmation, TEST_CERT, TEST_CERT_URL, TEST_NOW, TEST_REGION, TEST_TOPIC, webhookRequest } from './helpers.ts';

/*
 * Behaviour of the SES/SNS driver a mutation run of src/webhooks/ found no test for
 * (`npm run test:mutation -- webhooks`): each test fails when the code it names is broken in the
 * way a surviving mutant broke it.
 */

const json = (m: object) => JSON.stringify(m);
const CONFIRM_URL = `https://sns.${TEST_REGION}.amazonaws.com/?*`;

/** A driver at TEST_NOW that records why it refused. */
function driverWithReasons(options: { topicArns?: string[]; now?: number; routes?: Parameters<typeof fakeFetch>[0] } = {}) {
  const reasons: string[] = [];
  const f = fakeFetch(options.routes ?? { [TEST_CERT_URL]: TEST_CERT });
  const driver = new SesSnsWebhookDriver({ topicArns: options.topicArns ?? [TEST_TOPIC], fetch: f.fetch, now: () => new Date(options.now ?? TEST_NOW), onReject: (r) => reasons.push(r) });
  return { driver, reasons, calls: f.calls };
}

describe('SesSnsWebhookDriver tells onReject why it refused (what the warning log shows)', () => {
  const bounce = () => signedSns({ Type: 'Notification', Message: sesBounce('Permanent', ['a@example.com']) });
  const cases: { name: string; body: () => string; headers?: Record<string, string>; topicArns?: string[]; now?: number; routes?: Parameters<typeof fakeFetch>[0]; reason: RegExp }[] = [
    { name: 'raw delivery', body: () => sesBounce('Permanent', ['a@example.com']), headers: { 'x-amz-sns-rawdelivery': 'true' }, reason: /^raw message delivery is unsigned; turn it off for this subscription$/ },
    { name: 'no SNS envelope', body: () => '{}', reason: /^not a signed SNS message$/ },
    { name: 'message-type header', body: () => json(bounce()), headers: { 'x-amz-sns-message-type': 'SubscriptionConfirmation' }, reason: /^x-amz-sns-message-type does not match the message$/ },
    { name: 'topic header', body: () => json(bounce()), headers: { 'x-amz-sns-topic-arn': `${TEST_TOPIC}-other` }, reason: /^x-amz-sns-topic-arn does not match the message$/ },
    { name: 'no topic ARN, no allowlist', body: () => json(signedSns({ Type: 'Notification', Message: 'x', TopicArn: 'arn:aws:s3:::bucket' })), topicArns: [], reason: /^TopicArn is not an SNS topic ARN$/ },
    { name: 'topic outside the allowlist', body: () => json(signedSns({ Type: 'Notification', Message: 'x', TopicArn: `${TEST_TOPIC}-other` })), reason: new RegExp(`^topic ${TEST_TOPIC}-other is not in snsTopicArns$`) },
    { name: 'old message', body: () => json(bounce()), now: TEST_NOW + 2 * 3_600_000, reason: /^SNS Timestamp 2030-06-01T11:59:30\.000Z is outside the accepted window$/ },
    { name: 'a huge Timestamp is cut in the reason', body: () => json({ ...bounce(), Timestamp: `x${'9'.repeat(5000)}` }), reason: /^SNS Timestamp x9{39} is outside the accepted window$/ },
    { name: 'certificate URL', body: () => json({ ...bounce(), SigningCertURL: 'https://evil.example/SimpleNotificationService-1.pem' }), reason: /^SigningCertURL is not an SNS certificate URL of the topic region$/ },
    { name: 'signature with a leading non-base64 character', body: () => json({ ...bounce(), Signature: `*${bounce().Signature}` }), reason: /^Signature is not base64$/ },
    { name: 'signature with a trailing non-base64 character', body: () => json({ ...bounce(), Signature: `${bounce().Signature}*` }), reason: /^Signature is not base64$/ },
    { name: 'certificate unavailable', body: () => json(bounce()), routes: {}, reason: /^signing certificate unavailable: certificate fetch answered 404$/ },
    { name: 'certificate not valid yet', body: () => json({ ...signedSns({ Type: 'Notification', Message: 'x', Timestamp: '2026-01-01T00:00:00.000Z' }) }), now: Date.parse('2026-01-01T00:00:30Z'), reason: /^signing certificate is not valid now$/ },
    { name: 'signature', body: () => json({ ...bounce(), Message: 'changed' }), reason: /^signature does not match$/ },
  ];
  for (const c of cases) {
    test(`${c.name}: refused, with one reason`, async () => {
      const { driver, reasons } = driverWithReasons(c);
      assert.equal(await driver.verifySignature(webhookRequest(c.body(), c.headers)), false);
      assert.equal(reasons.length, 1, JSON.stringify(reasons));
      assert.match(reasons[0], c.reason);
    });
  }
});

describe('SesSnsWebhookDriver: clocks, defaults, confirmations', () => {
  test('a message up to five minutes ahead of our clock (skew) verifies; further ahead it does not', async () => {
    const at = (ms: number) => json(signedSns({ Type: 'Notification', Message: 'x', Timestamp: new Date(TEST_NOW + ms).toISOString() }));
    const { driver } = driverWithReasons();
    assert.equal(await driver.verifySignature(webhookRequest(at(4 * 60_000))), true);
    assert.equal(await driver.verifySignature(webhookRequest(at(6 * 60_000))), false);
  });

  test('without fetch and now, the global fetch (looked up when used) and the system clock are used', async () => {
    const original = globalThis.fetch;
    const f = fakeFetch({ [TEST_CERT_URL]: TEST_CERT });
    const driver = new SesSnsWebhookDriver({ topicArns: [TEST_TOPIC] });
    globalThis.fetch = f.fetch;
    try {
      const fresh = json(signedSns({ Type: 'Notification', Message: 'x', Timestamp: new Date().toISOString() }));
      assert.equal(await driver.verifySignature(webhookRequest(fresh)), true);
      assert.deepEqual(
        f.calls.map((c) => c.url),
        [TEST_CERT_URL],
      );
    } finally {
      globalThis.fetch = original;
    }
  });

  test('an UnsubscribeConfirmation verifies but is never confirmed (confirming it would subscribe again)', async () => {
    const { driver, calls } = driverWithReasons({ routes: { [TEST_CERT_URL]: TEST_CERT, [CONFIRM_URL]: 'ok' } });
    const m = signedSns({ Type: 'UnsubscribeConfirmation', Token: 'tok123', Message: 'You have chosen to deactivate subscription', SubscribeURL: `https://sns.${TEST_REGION}.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TEST_TOPIC}&Token=tok123` });
    const req = webhookRequest(json(m));
    assert.equal(await driver.verifySignature(req), true);
    assert.equal(driver.isSubscriptionConfirmation(req), false);
    await assert.rejects(driver.confirmSubscription(req), (err: unknown) => isNotifyError(err, 'WEBHOOK_DRIVER'));
    assert.deepEqual(
      calls.map((c) => c.url),
      [TEST_CERT_URL],
      'no confirm call',
    );
  });

  test('the confirm call is a GET without redirects; an answer with no body is fine', async () => {
    const { driver, calls } = driverWithReasons({ routes: { [CONFIRM_URL]: () => new Response(null, { status: 200 }) } });
    await driver.confirmSubscription(webhookRequest(json(subscriptionConfirmation())));
    assert.equal(calls.length, 1);
    assert.equal(calls[0].init?.method, 'GET');
    assert.equal(calls[0].init?.redirect, 'manual');
  });

  test('a failed confirm call is a WEBHOOK_DRIVER error naming the topic (and the status, or the cause)', async () => {
    const cause = new TypeError('fetch failed');
    const thrown = driverWithReasons({ routes: { [CONFIRM_URL]: () => Promise.reject(cause) } }).driver;
    await assert.rejects(thrown.confirmSubscription(webhookRequest(json(subscriptionConfirmation()))), (err: unknown) => {
      assert.ok(isNotifyError(err, 'WEBHOOK_DRIVER'));
      assert.equal(err.message, 'SNS subscription confirmation failed: fetch failed');
      assert.deepEqual(err.details, { topicArn: TEST_TOPIC });
      assert.equal(err.cause, cause);
      return true;
    });
    const refused = driverWithReasons({ routes: { [CONFIRM_URL]: () => new Response('no', { status: 403 }) } }).driver;
    await assert.rejects(refused.confirmSubscription(webhookRequest(json(subscriptionConfirmation()))), (err: unknown) => {
      assert.ok(isNotifyError(err, 'WEBHOOK_DRIVER'));
      assert.deepEqual(err.details, { topicArn: TEST_TOPIC, status: 403 });
      return true;
    });
  });
});

describe('SesSnsWebhookDriver: bodies that are no SNS message', () => {
  const message = sesBounce('Permanent', ['a@example.com']);
  const unsigned = { Type: 'Notification', MessageId: 'm-1', TopicArn: TEST_TOPIC, Message: message, Timestamp: new Date(TEST_NOW).toISOString(), SignatureVersion: '2', Signature: 'A'.repeat(344), SigningCertURL: TEST_CERT_URL };
  const bodies: Record<string, string> = {
    'JSON null': 'null',
    'an array': '[]',
    'a string': '"Notification"',
    'an unknown Type': json({ ...unsigned, Type: 'Other' }),
    'no Signature': json({ ...unsigned, Signature: undefined }),
    'no MessageId': json({ ...unsigned, MessageId: undefined }),
    'a number MessageId': json({ ...unsigned, MessageId: 5 }),
    'SignatureVersion 3': json({ ...unsigned, SignatureVersion: '3' }),
  };
  for (const [name, body] of Object.entries(bodies)) {
    test(`${name}: no confirmation, no events, not verified, nothing thrown`, async () => {
      const { driver, calls } = driverWithReasons();
      const req = webhookRequest(body);
      assert.equal(driver.isSubscriptionConfirmation(req), false);
      assert.deepEqual(driver.parseEvents(req), []);
      assert.equal(await driver.verifySignature(req), false);
      assert.equal(calls.length, 0);
    });
  }

  test('the same envelope, complete, does carry its event (the rows above differ only in what they break)', () => {
    assert.deepEqual(driverWithReasons().driver.parseEvents(webhookRequest(json(unsigned))), [{ type: 'bounce', email: 'a@example.com', message_id: 'ses-msg-1', id: 'm-1:a@example.com' }]);
  });
});

describe('SES notifications: what a Message may hold', () => {
  const parse = (message: string) => driverWithReasons().driver.parseEvents(webhookRequest(json(signedSns({ Type: 'Notification', Message: message, MessageId: 'sns-1' }))));

  test('a Message that is no JSON object, or a bounce without a recipient list, carries nothing', () => {
    for (const m of ['null', '[]', '"Bounce"', json({ notificationType: 'Bounce', bounce: { bounceType: 'Permanent' } }), json({ notificationType: 'Bounce', bounce: { bounceType: 'Permanent', bouncedRecipients: 'a@example.com' } })]) {
      assert.deepEqual(parse(m), [], m);
    }
  });

  test('without mail.messageId the message id is empty; the event id is the SNS MessageId and the lower-cased address', () => {
    assert.deepEqual(parse(json({ notificationType: 'Bounce', bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'Ann.Lee@Example.com' }] } })), [
      { type: 'bounce', email: 'Ann.Lee@Example.com', message_id: '', id: 'sns-1:ann.lee@example.com' },
    ]);
  });

  test('one notification yields at most 1,000 recipients', () => {
    const emails = Array.from({ length: 1001 }, (_, i) => `r${i}@example.com`);
    const events = parse(sesBounce('Permanent', emails));
    assert.equal(events.length, 1000);
    assert.equal(events.at(-1)?.email, 'r999@example.com');
  });
});

describe('SNS topics, hosts and certificate answers', () => {
  test('GovCloud and China topics parse; a China topic signs from .amazonaws.com.cn', () => {
    const gov = parseTopicArn('arn:aws-us-gov:sns:us-gov-west-1:123456789012:ses-feedback');
    assert.deepEqual(gov, { partition: 'aws-us-gov', region: 'us-gov-west-1', account: '123456789012', name: 'ses-feedback' });
    assert.equal(snsHost(gov!), 'sns.us-gov-west-1.amazonaws.com');
    const cn = parseTopicArn('arn:aws-cn:sns:cn-north-1:123456789012:ses-feedback')!;
    assert.equal(snsHost(cn), 'sns.cn-north-1.amazonaws.com.cn');
    assert.equal(isTrustedCertUrl('https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc123.pem', snsHost(cn)), true);
  });

  test('certificate URLs: a password, a deeper path or anything after .pem is refused', () => {
    const host = `sns.${TEST_REGION}.amazonaws.com`;
    assert.equal(isTrustedCertUrl(`https://${host}/SimpleNotificationService-abc123.pem`, host), true);
    for (const url of [`https://:secret@${host}/SimpleNotificationService-abc123.pem`, `https://${host}/x/SimpleNotificationService-abc123.pem`, `https://${host}/SimpleNotificationService-abc123.pemx`, `https://${host}/SimpleNotificationService-abc123.pem/x`]) {
      assert.equal(isTrustedCertUrl(url, host), false, url);
    }
  });

  test('a certificate answer is one PEM certificate, whitespace around it allowed, nothing else', async () => {
    const body = TEST_CERT.trim();
    const answer = async (text: string, status = 200) => {
      const certs = new SigningCertificates(fakeFetch({ [TEST_CERT_URL]: () => new Response(text, { status }) }).fetch);
      return certs.get(TEST_CERT_URL).then(
        (c) => c.subject,
        (e: Error) => `refused: ${e.message}`,
      );
    };
    assert.equal(await answer(body), 'CN=sns.amazonaws.com', 'no trailing newline');
    assert.equal(await answer(`\n\n${body}\n`), 'CN=sns.amazonaws.com', 'blank lines around it');
    assert.match(await answer(`Here it is:\n${body}\n`), /^refused: the answer is not exactly one PEM certificate/);
    assert.match(await answer(`${body}\nand more`), /^refused: the answer is not exactly one PEM certificate/);
    assert.match(await answer(body, 203), /^refused: certificate fetch answered 203$/);
  });
});

forEachEngine('SES receipts are keyed by the driver name, however the driver is configured', (h) => {
  const f = fakeFetch({ [TEST_CERT_URL]: TEST_CERT });
  const byName = useNotify(h, { webhookDriver: 'ses', snsTopicArns: [TEST_TOPIC], fetch: f.fetch, clock: manualClock(TEST_NOW) });
  const byObject = useNotify(h, { webhookDriver: new SesSnsWebhookDriver({ topicArns: [TEST_TOPIC], fetch: f.fetch, now: () => new Date(TEST_NOW) }), clock: manualClock(TEST_NOW) });
  const post = (n: Notify, body: string) => call(n, '/notify/webhook', { method: 'POST', body, headers: { 'content-type': 'text/plain; charset=UTF-8' } });

  test("a notification applied with webhookDriver 'ses' is a duplicate when the driver object is configured instead", async () => {
    const contact = await byName().contacts.upsert({ email: 'ses-dup@example.com' });
    const body = json(signedSns({ Type: 'Notification', Message: sesBounce('Permanent', ['ses-dup@example.com']) }));
    const first = await post(byName(), body);
    assert.deepEqual(await first.json(), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.equal((await byName().contacts.get(contact.id))?.status, 'bounced');
    const again = await post(byObject(), body);
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { received: 1, applied: 0, duplicates: 1, unknownContacts: 0 });
  });
});

describe('SES/SNS edges a second mutation run found untested', () => {
  const notification = (fields: Record<string, string> = {}) => json(signedSns({ Type: 'Notification', Message: 'x', ...fields }));

  test('the Timestamp window includes both ends: exactly one hour old, and exactly five minutes ahead', async () => {
    const at = (ms: number) => notification({ Timestamp: new Date(TEST_NOW + ms).toISOString() });
    const { driver, reasons } = driverWithReasons();
    assert.equal(await driver.verifySignature(webhookRequest(at(-3_600_000))), true);
    assert.equal(await driver.verifySignature(webhookRequest(at(5 * 60_000))), true);
    assert.deepEqual(reasons, []);
  });

  test("a certificate is valid from its first to its last second, both included", async () => {
    const cert = new X509Certificate(TEST_CERT);
    for (const edge of [Date.parse(cert.validFrom), Date.parse(cert.validTo)]) {
      const { driver, reasons } = driverWithReasons({ now: edge });
      assert.equal(await driver.verifySignature(webhookRequest(notification({ Timestamp: new Date(edge).toISOString() }))), true, new Date(edge).toISOString());
      assert.deepEqual(reasons, []);
    }
  });

  test('a Subject of null is an absent Subject: left out of the signed string, the message verifies', async () => {
    const m = signedSns({ Type: 'Notification', Message: 'x' });
    const { driver, reasons } = driverWithReasons();
    assert.equal(await driver.verifySignature(webhookRequest(json({ ...m, Subject: null }))), true);
    assert.deepEqual(reasons, []);
  });

  test('a confirmation Token with a character outside [A-Za-z0-9._~-] at either end is refused before any request', async () => {
    for (const token of ['!!tok123', 'tok123!!']) {
      const { driver, calls } = driverWithReasons({ routes: { [CONFIRM_URL]: () => new Response('', { status: 200 }) } });
      const m = signedSns({ Type: 'SubscriptionConfirmation', Token: token, Message: 'confirm', SubscribeURL: `https://sns.${TEST_REGION}.amazonaws.com/?Action=ConfirmSubscription` });
      await assert.rejects(driver.confirmSubscription(webhookRequest(json(m))), (err: unknown) => isNotifyError(err, 'WEBHOOK_DRIVER'), token);
      assert.deepEqual(calls, [], token);
    }
  });

  test('topic ARNs: anything before or after the ARN is refused; a two-digit region number parses', () => {
    assert.equal(parseTopicArn(`x${TEST_TOPIC}`), undefined);
    assert.equal(parseTopicArn(`${TEST_TOPIC}!x`), undefined);
    assert.equal(parseTopicArn('arn:aws:sns:eu-west-10:123456789012:t')?.region, 'eu-west-10');
  });

  test('the notification type names the object read: a Complaint is read from complaint, a Bounce from bounce, never the other', () => {
    const parse = (message: object) => driverWithReasons().driver.parseEvents(webhookRequest(json(signedSns({ Type: 'Notification', Message: json(message), MessageId: 'sns-2' }))));
    const bounce = { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'b@example.com' }] };
    const complaint = JSON.parse(sesComplaint(['c@example.com'])).complaint;
    assert.deepEqual(parse({ notificationType: 'Complaint', complaint, bounce }), [{ type: 'complaint', email: 'c@example.com', message_id: '', id: 'sns-2:c@example.com' }]);
    assert.deepEqual(parse({ notificationType: 'Bounce', complaint }), []);
    assert.deepEqual(parse({ notificationType: 'Complaint', bounce }), []);
  });

  test('a declared Content-Length over 16 KiB is refused before the body is read; 16 KiB exactly is read', async () => {
    const answer = async (length: number) => {
      const certs = new SigningCertificates(fakeFetch({ [TEST_CERT_URL]: () => new Response(TEST_CERT, { status: 200, headers: { 'content-length': String(length) } }) }).fetch);
      return certs.get(TEST_CERT_URL).then(
        (c) => c.subject,
        (e: Error) => `refused: ${e.message}`,
      );
    };
    assert.equal(await answer(16 * 1024 + 1), 'refused: certificate answer too large');
    assert.equal(await answer(16 * 1024), 'CN=sns.amazonaws.com');
  });

  test('a failed fetch does not evict a newer fetch of the same URL that replaced it in the cache', async () => {
    const OTHER = TEST_CERT_URL.replace('0123456789abcdef', 'fedcba9876543210');
    let failFirst: (e: Error) => void = () => {};
    let calls = 0;
    const fetchFn = (async () => {
      calls++;
      if (calls === 1) return new Promise<Response>((_, reject) => (failFirst = reject));
      return new Response(TEST_CERT, { status: 200 });
    }) as unknown as typeof fetch;
    const certs = new SigningCertificates(fetchFn, 1);
    const first = certs.get(TEST_CERT_URL);
    await certs.get(OTHER); // evicts the pending first fetch (cache of one)
    await certs.get(TEST_CERT_URL); // a second fetch of the URL, now cached
    failFirst(new Error('network down'));
    await assert.rejects(first, /network down/);
    await certs.get(TEST_CERT_URL);
    assert.equal(calls, 3, 'the second fetch stays cached');
  });
});
