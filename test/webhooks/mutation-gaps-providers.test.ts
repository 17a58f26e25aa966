import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { MailgunWebhookDriver, PostmarkWebhookDriver, SendGridWebhookDriver } from '../../src/index.ts';
import type { Notify } from '../../src/notify.ts';
import type { WebhookDriverInterface } from '../../src/webhooks/contract.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { webhookRequest } from './helpers.ts';

/*
 * Behaviour a mutation run of src/webhooks/ found no test for (`npm run test:mutation -- webhooks`):
 * each test here fails when the code it names is broken in the way the surviving mutant broke it.
 */

/** A constructor's refusal is a NotifyError CONFIG_INVALID naming the option to fix. */
function assertConfigError(build: () => unknown, option: string, message: RegExp): void {
  assert.throws(build, (err: unknown) => {
    assert.ok(isNotifyError(err, 'CONFIG_INVALID'), String(err));
    assert.deepEqual(err.details, { option });
    assert.match(err.message, message);
    return true;
  });
}

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('Postmark webhook payloads as Postmark documents them', () => {
  const driver = new PostmarkWebhookDriver({ username: 'hook', password: 'pa55' });
  const parse = (body: unknown) => driver.parseEvents(webhookRequest(typeof body === 'string' ? body : JSON.stringify(body)));

  test('the bounce webhook without RecordType (the older form) is a bounce keyed by its ID', () => {
    // Example from https://postmarkapp.com/email-webhooks ("Bounce Webhook"), fields as published.
    const documented = {
      ID: 42,
      Type: 'HardBounce',
      TypeCode: 1,
      Name: 'Hard bounce',
      Tag: 'Test',
      MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
      Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
      Details: 'Test bounce details',
      Email: 'john@example.com',
      BouncedAt: '2014-08-01T13:28:10.2735393-04:00',
      DumpAvailable: true,
      Inactive: true,
      CanActivate: true,
      Subject: 'Test subject',
      Metadata: { user_id: 43 },
    };
    assert.deepEqual(parse(documented), [{ type: 'bounce', email: 'john@example.com', message_id: '883953f4-6105-42a2-a16a-77a8eac79483', id: 'Bounce:42' }]);
  });

  test('the spam-complaint test request without RecordType is a complaint', () => {
    // The curl example of https://postmarkapp.com/developer/webhooks/spam-complaint-webhook.
    const documented = {
      ID: 42,
      Type: 'SpamComplaint',
      TypeCode: 512,
      Name: 'Spam complaint',
      Tag: 'Test',
      MessageID: '00000000-0000-0000-0000-000000000000',
      ServerID: 1234,
      Description: '',
      Details: 'Test spam complaint details',
      Email: 'john@example.com',
      From: 'sender@example.com',
      BouncedAt: '2018-02-20T12:54:23.3396434-05:00',
      DumpAvailable: true,
      Inactive: true,
      CanActivate: false,
      Subject: 'Test subject',
    };
    assert.deepEqual(parse(documented), [{ type: 'complaint', email: 'john@example.com', message_id: '00000000-0000-0000-0000-000000000000', id: 'Bounce:42' }]);
  });

  test("every bounce type of Postmark's list maps: hard, soft, or left out", () => {
    // Type names from Postmark's own client, BounceType (https://app.unpkg.com/postmark@4.0.2/files/dist/client/models/bounces/Bounce.d.ts).
    const expected: Record<string, string | undefined> = {
      HardBounce: 'bounce',
      BadEmailAddress: 'bounce',
      Transient: 'soft_bounce',
      SoftBounce: 'soft_bounce',
      DnsError: 'soft_bounce',
      Blocked: 'soft_bounce',
      Unknown: 'soft_bounce',
      AutoResponder: undefined,
      Unsubscribe: undefined,
      AddressChange: undefined,
      ManuallyDeactivated: undefined,
    };
    for (const [Type, type] of Object.entries(expected)) {
      const events = parse({ RecordType: 'Bounce', ID: 7, Type, MessageID: 'm-7', Email: 'a@example.com' });
      assert.deepEqual(
        events.map((e) => e.type),
        type ? [type] : [],
        Type,
      );
    }
  });

  test('a record without an ID gets no id of its own (the route keys it by the body); a string ID is kept; no MessageID is an empty one', () => {
    assert.deepEqual(parse({ RecordType: 'Bounce', Type: 'HardBounce', Email: 'a@example.com', MessageID: 'm' }), [{ type: 'bounce', email: 'a@example.com', message_id: 'm' }]);
    assert.deepEqual(parse({ RecordType: 'Bounce', ID: true, Type: 'HardBounce', Email: 'a@example.com', MessageID: 'm' }), [{ type: 'bounce', email: 'a@example.com', message_id: 'm' }]);
    assert.deepEqual(parse({ RecordType: 'Bounce', ID: 'b-9', Type: 'HardBounce', Email: 'a@example.com' }), [{ type: 'bounce', email: 'a@example.com', message_id: '', id: 'Bounce:b-9' }]);
  });

  test('a body that is no JSON object carries no events', () => {
    for (const body of ['not json', 'null', '[]', '"HardBounce"', '42']) assert.deepEqual(parse(body), [], body);
  });

  test('missing or unusable credentials are a CONFIG_INVALID naming the option', () => {
    assertConfigError(() => new PostmarkWebhookDriver(undefined as never), 'postmarkWebhookUsername', /postmarkWebhookUsername/);
    assertConfigError(() => new PostmarkWebhookDriver({ username: 'a:b', password: 'x' }), 'postmarkWebhookUsername', /no ':'/);
  });
});

describe('SendGrid signed event webhook: keys and batches', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const b64 = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const driver = new SendGridWebhookDriver({ publicKey: b64 });
  const parse = (body: string) => driver.parseEvents(webhookRequest(body));

  test('a key pasted with surrounding whitespace or line breaks still verifies', () => {
    const body = '[]';
    const headers = { 'x-twilio-email-event-webhook-timestamp': '1700000000', 'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(`1700000000${body}`), privateKey).toString('base64') };
    for (const key of [`  ${b64}\n`, `\n${publicKey.export({ format: 'pem', type: 'spki' })}\n\n`]) {
      assert.equal(new SendGridWebhookDriver({ publicKey: key }).verifySignature(webhookRequest(body, headers)), true, JSON.stringify(key));
    }
  });

  test('a key that is missing, unreadable or on another curve is a CONFIG_INVALID naming the option', () => {
    assertConfigError(() => new SendGridWebhookDriver(undefined as never), 'sendgridWebhookPublicKey', /verification key/);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    assertConfigError(() => new SendGridWebhookDriver({ publicKey: p384 }), 'sendgridWebhookPublicKey', /P-256/);
    assert.throws(
      () => new SendGridWebhookDriver({ publicKey: 'bm9wZQ==' }),
      (err: unknown) => isNotifyError(err, 'CONFIG_INVALID') && err.cause instanceof Error,
      'the parse error is kept as the cause',
    );
  });

  test('a body that is no JSON array carries no events; entries that are no objects are skipped; no message id is an empty one', () => {
    for (const body of ['not json', '{"event":"bounce","email":"a@example.com"}', 'null']) assert.deepEqual(parse(body), [], body);
    assert.deepEqual(parse(JSON.stringify([null, 'bounce', 7, { email: 'a@example.com', event: 'bounce', type: 'bounce', sg_event_id: 'e1' }])), [{ type: 'bounce', email: 'a@example.com', message_id: '', id: 'e1' }]);
  });

  test('a batch is read up to 10,000 events', () => {
    const batch = Array.from({ length: 10_001 }, (_, i) => ({ email: `u${i}@example.com`, event: 'bounce', type: 'bounce', sg_event_id: `e${i}` }));
    const events = parse(JSON.stringify(batch));
    assert.equal(events.length, 10_000);
    assert.equal(events.at(-1)?.email, 'u9999@example.com');
  });
});

describe('Mailgun webhooks: the signature object as documented', () => {
  const key = 'key-test-signing';
  const driver = new MailgunWebhookDriver({ signingKey: key });
  const token = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123';
  const hmac = (timestamp: string | number) => createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex');
  const failed = { event: 'failed', severity: 'permanent', recipient: 'alice@example.com', message: { headers: { 'message-id': 't1@example.com' } } };
  const body = (signature: object, eventData: object = failed) => JSON.stringify({ signature, 'event-data': eventData });

  test('a timestamp sent as a number (the documented type is int) verifies and parses', () => {
    // https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks: "timestamp | int".
    const req = webhookRequest(body({ token, timestamp: 1770920772, signature: hmac(1770920772) }));
    assert.equal(driver.verifySignature(req), true);
    assert.deepEqual(driver.parseEvents(req), [{ type: 'bounce', email: 'alice@example.com', message_id: 't1@example.com', id: `token:${token}` }]);
  });

  test('a signature that is not a string is refused without throwing', () => {
    const good = hmac('1770920772');
    for (const signature of [[good], { good }, 7]) {
      assert.equal(driver.verifySignature(webhookRequest(body({ token, timestamp: '1770920772', signature }))), false, JSON.stringify(signature));
    }
  });

  test('events need a JSON object with event-data and a signature; a failure of unknown severity is left out; no message headers is an empty id', () => {
    const signature = { token, timestamp: '1770920772', signature: hmac('1770920772') };
    const parse = (text: string) => driver.parseEvents(webhookRequest(text));
    for (const text of ['not json', 'null', '[]', JSON.stringify({ 'event-data': failed }), JSON.stringify({ signature })]) assert.deepEqual(parse(text), [], text);
    assert.deepEqual(parse(body(signature, { ...failed, severity: undefined })), []);
    assert.deepEqual(parse(body(signature, { ...failed, severity: 'unknown' })), []);
    assert.deepEqual(parse(body(signature, { event: 'failed', severity: 'temporary', recipient: 'alice@example.com' })), [{ type: 'soft_bounce', email: 'alice@example.com', message_id: '', id: `token:${token}` }]);
  });

  test('a missing signing key is a CONFIG_INVALID naming the option', () => {
    assertConfigError(() => new MailgunWebhookDriver(undefined as never), 'mailgunWebhookSigningKey', /mailgunWebhookSigningKey/);
  });
});

test('the provider drivers never take a request for a subscription handshake (a boolean false)', () => {
  const drivers: WebhookDriverInterface[] = [new PostmarkWebhookDriver({ username: 'u', password: 'p' }), new SendGridWebhookDriver({ publicKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString() }), new MailgunWebhookDriver({ signingKey: 'k' })];
  for (const d of drivers) assert.equal(d.isSubscriptionConfirmation(webhookRequest('{"Type":"SubscriptionConfirmation"}')), false);
});

forEachEngine('provider receipts are keyed by the driver name, however the driver is configured', (h) => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const sgKey = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const token = 'c0ffee0123456789abcdef0123456789abcdef0123456789ab';
  const mgBody = JSON.stringify({
    signature: { timestamp: '1700000000', token, signature: createHmac('sha256', 'mg-key').update(`1700000000${token}`).digest('hex') },
    'event-data': { event: 'failed', severity: 'permanent', recipient: 'mg@example.com' },
  });
  const sgBody = JSON.stringify([{ email: 'sg@example.com', event: 'bounce', type: 'bounce', sg_event_id: 'sg-dup-1' }]);
  const cases: { name: string; email: string; byName: () => Notify; byObject: () => Notify; body: string; headers: Record<string, string> }[] = [
    {
      name: 'postmark',
      email: 'pm@example.com',
      byName: useNotify(h, { webhookDriver: 'postmark', postmarkWebhookUsername: 'hook', postmarkWebhookPassword: 'pa55' }),
      byObject: useNotify(h, { webhookDriver: new PostmarkWebhookDriver({ username: 'hook', password: 'pa55' }) }),
      body: JSON.stringify({ RecordType: 'Bounce', ID: 9001, Type: 'HardBounce', MessageID: 'pm-dup', Email: 'pm@example.com' }),
      headers: { authorization: basic('hook', 'pa55') },
    },
    {
      name: 'sendgrid',
      email: 'sg@example.com',
      byName: useNotify(h, { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: sgKey }),
      byObject: useNotify(h, { webhookDriver: new SendGridWebhookDriver({ publicKey: sgKey }) }),
      body: sgBody,
      headers: { 'x-twilio-email-event-webhook-timestamp': '1700000000', 'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(`1700000000${sgBody}`), privateKey).toString('base64') },
    },
    {
      name: 'mailgun',
      email: 'mg@example.com',
      byName: useNotify(h, { webhookDriver: 'mailgun', mailgunWebhookSigningKey: 'mg-key' }),
      byObject: useNotify(h, { webhookDriver: new MailgunWebhookDriver({ signingKey: 'mg-key' }) }),
      body: mgBody,
      headers: {},
    },
  ];
  const post = (n: Notify, body: string, headers: Record<string, string>) => call(n, '/notify/webhook', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  for (const c of cases) {
    test(`${c.name}: a delivery applied with webhookDriver '${c.name}' is a duplicate when the driver object is configured instead`, async () => {
      const contact = await c.byName().contacts.upsert({ email: c.email });
      const first = await post(c.byName(), c.body, c.headers);
      assert.equal(first.status, 200);
      assert.deepEqual(await first.json(), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
      assert.equal((await c.byName().contacts.get(contact.id))?.status, 'bounced');
      const again = await post(c.byObject(), c.body, c.headers);
      assert.equal(again.status, 200);
      assert.deepEqual(await again.json(), { received: 1, applied: 0, duplicates: 1, unknownContacts: 0 });
      const receipts = await c.byName().context.store.db.selectFrom('notify_webhook_receipts').select('provider').execute();
      assert.ok(receipts.some((r) => r.provider === c.name), JSON.stringify(receipts));
    });
  }
});

describe('SendGrid edges a second mutation run found untested', () => {
  const der = (key: ReturnType<typeof generateKeyPairSync>['publicKey']) => key.export({ type: 'spki', format: 'der' }).toString('base64');

  test('a verification key that is not ECDSA P-256 (P-384, RSA) is refused at construction', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey;
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    for (const key of [p384, rsa]) assertConfigError(() => new SendGridWebhookDriver({ publicKey: der(key) }), 'sendgridWebhookPublicKey', /must be an ECDSA P-256 public key/);
  });

  test('only a dropped event is read for its reason (padded reasons too); other events with a reason are neither applied nor logged', () => {
    const ignored: string[] = [];
    const driver = new SendGridWebhookDriver({ publicKey: der(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey), onIgnored: (r) => ignored.push(r) });
    const events = driver.parseEvents(
      webhookRequest(
        JSON.stringify([
          { event: 'deferred', reason: 'Bounced Address', email: 'd@example.com', sg_event_id: 'e1' },
          { event: 'delivered', reason: 'spam reporting address', email: 'v@example.com', sg_event_id: 'e2' },
          { event: 'dropped', reason: '  Bounced Address  ', email: 'p@example.com', sg_event_id: 'e3' },
        ]),
      ),
    );
    assert.deepEqual(events, [{ type: 'bounce', email: 'p@example.com', message_id: '', id: 'e3' }]);
    assert.deepEqual(ignored, []);
  });
});
