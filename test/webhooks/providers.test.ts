import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { MailgunWebhookDriver, PostmarkWebhookDriver, SendGridWebhookDriver } from '../../src/index.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { capturedLogger, sendgridHeaders, webhookRequest } from './helpers.ts';

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('PostmarkWebhookDriver (HTTP Basic credentials)', () => {
  const driver = new PostmarkWebhookDriver({ username: 'hook', password: 'pa55' });
  const bounce = JSON.stringify({ RecordType: 'Bounce', ID: 42, Type: 'HardBounce', TypeCode: 1, MessageID: 'pm-1', Email: 'john@example.com' });

  test('right credentials verify; wrong, missing or other schemes do not', async () => {
    assert.equal(await driver.verifySignature(webhookRequest(bounce, { authorization: basic('hook', 'pa55') })), true);
    assert.equal(await driver.verifySignature(webhookRequest(bounce, { authorization: basic('hook', 'pa56') })), false);
    assert.equal(await driver.verifySignature(webhookRequest(bounce, { authorization: basic('hook', '') })), false);
    assert.equal(await driver.verifySignature(webhookRequest(bounce, { authorization: `Bearer ${Buffer.from('hook:pa55').toString('base64')}` })), false);
    assert.equal(await driver.verifySignature(webhookRequest(bounce)), false);
    assert.throws(() => new PostmarkWebhookDriver({ username: '', password: 'x' }), /postmarkWebhookUsername/);
  });

  test('record types map to events', async () => {
    const parse = (o: object) => driver.parseEvents(webhookRequest(JSON.stringify(o)));
    const first = async (o: object) => (await parse(o))[0];
    assert.deepEqual(await parse(JSON.parse(bounce)), [{ type: 'bounce', email: 'john@example.com', message_id: 'pm-1', id: 'Bounce:42' }]);
    assert.equal((await first({ RecordType: 'Bounce', ID: 1, Type: 'SoftBounce', Email: 'a@example.com', MessageID: 'm' })).type, 'soft_bounce');
    assert.equal((await first({ RecordType: 'Bounce', ID: 2, Type: 'Transient', Email: 'a@example.com', MessageID: 'm' })).type, 'soft_bounce');
    assert.deepEqual(await first({ RecordType: 'SpamComplaint', ID: 3, Type: 'SpamComplaint', Email: 'a@example.com', MessageID: 'm' }), { type: 'complaint', email: 'a@example.com', message_id: 'm', id: 'SpamComplaint:3' });
    assert.deepEqual(await parse({ RecordType: 'Bounce', ID: 4, Type: 'AutoResponder', Email: 'a@example.com' }), []);
    assert.deepEqual(await parse({ RecordType: 'Delivery', MessageID: 'm', Recipient: 'a@example.com' }), []);
    assert.deepEqual(await parse({ RecordType: 'Bounce', ID: 5, Type: 'HardBounce', Email: 'nope' }), []);
  });
});

describe('PostmarkWebhookDriver: SubscriptionChange (Broadcast streams report bounces and complaints only this way)', () => {
  const ignored: string[] = [];
  const driver = new PostmarkWebhookDriver({ username: 'hook', password: 'pa55', onIgnored: (reason: string) => void ignored.push(reason) });
  const change = (fields: Record<string, unknown>) => ({
    RecordType: 'SubscriptionChange',
    MessageID: 'pm-sc-1',
    ServerID: 1,
    MessageStream: 'broadcast',
    ChangedAt: '2030-01-01T10:00:00.000000Z',
    Recipient: 'sc@example.com',
    Origin: 'Recipient',
    SuppressSending: true,
    SuppressionReason: 'HardBounce',
    Tag: null,
    Metadata: {},
    ...fields,
  });
  const parse = (o: object) => driver.parseEvents(webhookRequest(JSON.stringify(o)));

  test('SuppressSending with HardBounce is a bounce, with SpamComplaint a complaint, keyed by change time and address', async () => {
    assert.deepEqual(await parse(change({})), [{ type: 'bounce', email: 'sc@example.com', message_id: 'pm-sc-1', id: 'SubscriptionChange:2030-01-01T10:00:00.000000Z:sc@example.com' }]);
    assert.deepEqual(await parse(change({ SuppressionReason: 'SpamComplaint', Recipient: 'SC@Example.com' })), [
      { type: 'complaint', email: 'SC@Example.com', message_id: 'pm-sc-1', id: 'SubscriptionChange:2030-01-01T10:00:00.000000Z:sc@example.com' },
    ]);
    assert.deepEqual(await parse(change({ MessageID: null })), [{ type: 'bounce', email: 'sc@example.com', message_id: '', id: 'SubscriptionChange:2030-01-01T10:00:00.000000Z:sc@example.com' }]);
    assert.equal(ignored.length, 0);
  });

  test('a manual suppression (an unsubscribe too), a reactivation or a malformed change is reported, not applied', async () => {
    ignored.length = 0;
    assert.deepEqual(await parse(change({ SuppressionReason: 'ManualSuppression', Origin: 'Customer', MessageID: null })), []);
    assert.deepEqual(await parse(change({ SuppressSending: false, SuppressionReason: null, Origin: 'Customer', MessageID: null })), []);
    assert.deepEqual(await parse(change({ SuppressSending: 'true' })), []);
    assert.deepEqual(await parse(change({ SuppressionReason: 'Unknown' })), []);
    assert.deepEqual(await parse(change({ SuppressionReason: 'constructor' })), [], 'no inherited property is a reason');
    assert.equal(ignored.length, 5, ignored.join('\n'));
    assert.match(ignored[0], /SubscriptionChange.*ManualSuppression/);
    assert.match(ignored[1], /SubscriptionChange.*reactivat/);
    for (const line of ignored) assert.doesNotMatch(line, /sc@example\.com/, 'no address in the logs');
    assert.deepEqual(await parse(change({ Recipient: 'not an address' })), []);
  });
});

describe('SendGridWebhookDriver (signed event webhook, ECDSA P-256)', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const b64Key = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const driver = new SendGridWebhookDriver({ publicKey: b64Key });
  const events = JSON.stringify([
    { email: 'a@example.com', event: 'bounce', type: 'bounce', sg_event_id: 'e1', sg_message_id: 'sg1.filter', 'smtp-id': '<t1@example.com>', timestamp: 1 },
    { email: 'b@example.com', event: 'bounce', type: 'blocked', sg_event_id: 'e2', sg_message_id: 'sg2.filter', timestamp: 1 },
    { email: 'c@example.com', event: 'spamreport', sg_event_id: 'e3', sg_message_id: 'sg3.filter', timestamp: 1 },
    { email: 'd@example.com', event: 'delivered', sg_event_id: 'e4', timestamp: 1 },
    { email: 'e@example.com', event: 'deferred', sg_event_id: 'e5', timestamp: 1 },
  ]);
  const signed = (body: string, ts = '1700000000') => ({
    'x-twilio-email-event-webhook-timestamp': ts,
    'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(ts + body), privateKey).toString('base64'),
  });

  test('a signature over timestamp + body verifies; a changed body, timestamp or key does not', async () => {
    assert.equal(await driver.verifySignature(webhookRequest(events, signed(events))), true);
    assert.equal(await new SendGridWebhookDriver({ publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString() }).verifySignature(webhookRequest(events, signed(events))), true, 'PEM key');
    assert.equal(await driver.verifySignature(webhookRequest(`${events} `, signed(events))), false);
    assert.equal(await driver.verifySignature(webhookRequest(events, { ...signed(events), 'x-twilio-email-event-webhook-timestamp': '1700000001' })), false);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    assert.equal(await driver.verifySignature(webhookRequest(events, { ...signed(events), 'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(`1700000000${events}`), other.privateKey).toString('base64') })), false);
    assert.equal(await driver.verifySignature(webhookRequest(events, { 'x-twilio-email-event-webhook-timestamp': '1700000000', 'x-twilio-email-event-webhook-signature': 'AAAAAAAAAAAAAAAAAAAAAAAAAAAA' })), false);
    assert.equal(await driver.verifySignature(webhookRequest(events)), false);
  });

  test('bounce, blocked and spamreport map to events; others are left out; keys are checked', async () => {
    assert.deepEqual(await driver.parseEvents(webhookRequest(events)), [
      { type: 'bounce', email: 'a@example.com', message_id: '<t1@example.com>', id: 'e1' },
      { type: 'soft_bounce', email: 'b@example.com', message_id: 'sg2.filter', id: 'e2' },
      { type: 'complaint', email: 'c@example.com', message_id: 'sg3.filter', id: 'e3' },
    ]);
    assert.throws(() => new SendGridWebhookDriver({ publicKey: 'bm9wZQ==' }), /sendgridWebhookPublicKey/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    assert.throws(() => new SendGridWebhookDriver({ publicKey: rsa }), /P-256/);
  });

  test('dropped: Bounced Address and Invalid are bounces, Spam Reporting Address a complaint; other reasons are reported, not applied', async () => {
    const ignored: string[] = [];
    const d = new SendGridWebhookDriver({ publicKey: b64Key, onIgnored: (reason: string) => void ignored.push(reason) });
    const dropped = (email: string, reason: unknown, id: string) => ({ email, event: 'dropped', reason, sg_event_id: id, sg_message_id: `${id}.filter`, 'smtp-id': `<${id}@example.com>`, timestamp: 1 });
    const body = JSON.stringify([
      dropped('a@example.com', 'Bounced Address', 'd1'),
      dropped('b@example.com', 'Invalid', 'd2'),
      dropped('c@example.com', 'Spam Reporting Address', 'd3'),
      dropped('d@example.com', 'Unsubscribed Address', 'd4'),
      dropped('e@example.com', 'Invalid SMTPAPI header', 'd5'),
      dropped('f@example.com', 'Recipient List over Package Quota', 'd6'),
      dropped('g@example.com', undefined, 'd7'),
      dropped('not an address', 'Invalid', 'd8'),
      dropped('h@example.com', '__proto__', 'd9'),
    ]);
    assert.deepEqual(await d.parseEvents(webhookRequest(body)), [
      { type: 'bounce', email: 'a@example.com', message_id: '<d1@example.com>', id: 'd1' },
      { type: 'bounce', email: 'b@example.com', message_id: '<d2@example.com>', id: 'd2' },
      { type: 'complaint', email: 'c@example.com', message_id: '<d3@example.com>', id: 'd3' },
    ]);
    assert.equal(ignored.length, 5, ignored.join('\n'));
    const expected = [
      ['d4', 'Unsubscribed Address'],
      ['d5', 'Invalid SMTPAPI header'],
      ['d6', 'Recipient List over Package Quota'],
      ['d7', 'no reason'],
      ['d9', '__proto__'],
    ];
    for (const [i, [id, why]] of expected.entries()) {
      assert.match(ignored[i], new RegExp(`dropped event ${id} \\(${why}\\)`));
      assert.doesNotMatch(ignored[i], /@example\.com/, 'no address in the logs');
    }
  });
});

describe('MailgunWebhookDriver (HMAC-SHA256 of timestamp + token)', () => {
  const key = 'key-test-signing';
  const driver = new MailgunWebhookDriver({ signingKey: key });
  const payload = (eventData: object, token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0', timestamp = '1529006854', k = key) =>
    JSON.stringify({ signature: { timestamp, token, signature: createHmac('sha256', k).update(timestamp + token).digest('hex') }, 'event-data': eventData });
  const failed = { event: 'failed', severity: 'permanent', recipient: 'alice@example.com', message: { headers: { 'message-id': 't1@example.com' } } };

  test('good signature verifies; wrong key, changed token or timestamp, or junk do not', async () => {
    assert.equal(await driver.verifySignature(webhookRequest(payload(failed))), true);
    assert.equal(await driver.verifySignature(webhookRequest(payload(failed, undefined, undefined, 'other-key'))), false);
    const p = JSON.parse(payload(failed));
    assert.equal(await driver.verifySignature(webhookRequest(JSON.stringify({ ...p, signature: { ...p.signature, token: `${p.signature.token}x` } }))), false);
    assert.equal(await driver.verifySignature(webhookRequest(JSON.stringify({ ...p, signature: { ...p.signature, timestamp: '1529006855' } }))), false);
    assert.equal(await driver.verifySignature(webhookRequest(JSON.stringify({ ...p, signature: 'x' }))), false);
    assert.equal(await driver.verifySignature(webhookRequest('timestamp=1&token=2&signature=3')), false);
    assert.throws(() => new MailgunWebhookDriver({ signingKey: '' }), /mailgunWebhookSigningKey/);
  });

  test('failed permanent/temporary and complained map to events keyed by token', async () => {
    assert.deepEqual(await driver.parseEvents(webhookRequest(payload(failed))), [{ type: 'bounce', email: 'alice@example.com', message_id: 't1@example.com', id: 'token:a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0' }]);
    assert.equal((await driver.parseEvents(webhookRequest(payload({ ...failed, severity: 'temporary' }))))[0].type, 'soft_bounce');
    assert.equal((await driver.parseEvents(webhookRequest(payload({ event: 'complained', recipient: 'alice@example.com' }))))[0].type, 'complaint');
    assert.deepEqual(await driver.parseEvents(webhookRequest(payload({ event: 'delivered', recipient: 'alice@example.com' }))), []);
  });
});

forEachEngine('provider drivers through POST /notify/webhook', (h) => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const postmarkLog = capturedLogger();
  const postmark = useNotify(h, { webhookDriver: 'postmark', postmarkWebhookUsername: 'hook', postmarkWebhookPassword: 'pa55', logger: postmarkLog.logger });
  const sendgridLog = capturedLogger();
  const sendgrid = useNotify(h, { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'), logger: sendgridLog.logger });
  const mailgun = useNotify(h, { webhookDriver: 'mailgun', mailgunWebhookSigningKey: 'mg-key' });
  const post = (n: Notify, body: string, headers: Record<string, string>) => call(n, '/notify/webhook', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  test('postmark: bad credentials 403, good 200 once', async () => {
    const c = await postmark().contacts.upsert({ email: 'pm@example.com' });
    const body = JSON.stringify({ RecordType: 'Bounce', ID: 7, Type: 'HardBounce', MessageID: 'pm-7', Email: 'pm@example.com' });
    assert.equal((await post(postmark(), body, { authorization: basic('hook', 'nope') })).status, 403);
    assert.equal((await postmark().contacts.get(c.id))?.status, 'subscribed');
    assert.equal((await post(postmark(), body, { authorization: basic('hook', 'pa55') })).status, 200);
    assert.equal((await (await post(postmark(), body, { authorization: basic('hook', 'pa55') })).json()).duplicates, 1);
    assert.equal((await postmark().contacts.get(c.id))?.status, 'bounced');
  });

  test('postmark: a SubscriptionChange HardBounce bounces the contact once; a ManualSuppression is logged and changes nothing', async () => {
    const c = await postmark().contacts.upsert({ email: 'pm-sc@example.com' });
    const manual = await postmark().contacts.upsert({ email: 'pm-manual@example.com' });
    const auth = { authorization: basic('hook', 'pa55') };
    const change = (Recipient: string, SuppressionReason: string) =>
      JSON.stringify({ RecordType: 'SubscriptionChange', MessageID: null, ServerID: 1, MessageStream: 'broadcast', ChangedAt: '2030-02-01T10:53:34.416071Z', Recipient, Origin: 'Recipient', SuppressSending: true, SuppressionReason, Tag: null, Metadata: {} });
    assert.equal((await post(postmark(), change('pm-sc@example.com', 'HardBounce'), { authorization: basic('hook', 'nope') })).status, 403);
    assert.equal((await postmark().contacts.get(c.id))?.status, 'subscribed');
    assert.deepEqual(await (await post(postmark(), change('pm-sc@example.com', 'HardBounce'), auth)).json(), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await (await post(postmark(), change('pm-sc@example.com', 'HardBounce'), auth)).json(), { received: 1, applied: 0, duplicates: 1, unknownContacts: 0 });
    assert.equal((await postmark().contacts.get(c.id))?.status, 'bounced');
    assert.deepEqual(await (await post(postmark(), change('pm-manual@example.com', 'ManualSuppression'), auth)).json(), { received: 0, applied: 0, duplicates: 0, unknownContacts: 0 });
    assert.equal((await postmark().contacts.get(manual.id))?.status, 'subscribed');
    const events = await postmark().context.store.db.selectFrom('notify_events').select(['contact_id', 'type']).where('contact_id', 'in', [c.id, manual.id]).execute();
    assert.deepEqual(events.map((e) => [Number(e.contact_id), e.type]), [[c.id, 'bounce']]);
    const logged = postmarkLog.lines.filter((l) => l.driver === 'postmark' && /not applied/.test(String(l.msg)));
    assert.equal(logged.length, 1);
    assert.match(String(logged[0].reason), /ManualSuppression/);
  });

  test('sendgrid: bad signature 403, good batch 200, redelivered batch applied once', async () => {
    const c = await sendgrid().contacts.upsert({ email: 'sg@example.com' });
    const body = JSON.stringify([{ email: 'sg@example.com', event: 'spamreport', sg_event_id: 'sg-e1', sg_message_id: 'x' }]);
    const ts = '1700000000';
    const sig = sign('sha256', Buffer.from(ts + body), privateKey).toString('base64');
    assert.equal((await post(sendgrid(), body, { 'x-twilio-email-event-webhook-timestamp': '1700000001', 'x-twilio-email-event-webhook-signature': sig })).status, 403);
    assert.equal((await sendgrid().contacts.get(c.id))?.status, 'subscribed');
    const ok = { 'x-twilio-email-event-webhook-timestamp': ts, 'x-twilio-email-event-webhook-signature': sig };
    assert.equal((await post(sendgrid(), body, ok)).status, 200);
    assert.equal((await (await post(sendgrid(), body, ok)).json()).duplicates, 1);
    assert.equal((await sendgrid().contacts.get(c.id))?.status, 'complained');
  });

  test('sendgrid: a dropped Bounced Address bounces the contact; an Unsubscribed Address drop is logged and changes nothing', async () => {
    const bounced = await sendgrid().contacts.upsert({ email: 'sg-dropped@example.com' });
    const kept = await sendgrid().contacts.upsert({ email: 'sg-unsub@example.com' });
    const body = JSON.stringify([
      { email: 'sg-dropped@example.com', event: 'dropped', reason: 'Bounced Address', sg_event_id: 'sg-d1', sg_message_id: 'x1', timestamp: 1 },
      { email: 'sg-unsub@example.com', event: 'dropped', reason: 'Unsubscribed Address', sg_event_id: 'sg-d2', sg_message_id: 'x2', timestamp: 1 },
    ]);
    const res = await post(sendgrid(), body, sendgridHeaders(body, privateKey));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.equal((await sendgrid().contacts.get(bounced.id))?.status, 'bounced');
    assert.equal((await sendgrid().contacts.get(kept.id))?.status, 'subscribed');
    const events = await sendgrid().context.store.db.selectFrom('notify_events').select(['contact_id', 'type']).where('contact_id', 'in', [bounced.id, kept.id]).execute();
    assert.deepEqual(events.map((e) => [Number(e.contact_id), e.type]), [[bounced.id, 'bounce']]);
    const logged = sendgridLog.lines.filter((l) => l.driver === 'sendgrid' && /not applied/.test(String(l.msg)));
    assert.equal(logged.length, 1);
    assert.match(String(logged[0].reason), /Unsubscribed Address/);
  });

  test('mailgun: bad signature 403, good 200, replayed token applied once', async () => {
    const c = await mailgun().contacts.upsert({ email: 'mg@example.com' });
    const token = 'b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5';
    const body = (k: string) =>
      JSON.stringify({
        signature: { timestamp: '1700000000', token, signature: createHmac('sha256', k).update(`1700000000${token}`).digest('hex') },
        'event-data': { event: 'failed', severity: 'temporary', recipient: 'mg@example.com', message: { headers: { 'message-id': 'mg-1@example.com' } } },
      });
    assert.equal((await post(mailgun(), body('wrong'), {})).status, 403);
    assert.equal((await post(mailgun(), body('mg-key'), {})).status, 200);
    assert.equal((await (await post(mailgun(), body('mg-key'), {})).json()).duplicates, 1);
    const rows = await mailgun().context.store.db.selectFrom('notify_events').select('type').where('contact_id', '=', c.id).execute();
    assert.deepEqual(rows.map((r) => r.type), ['soft_bounce']);
    assert.equal((await mailgun().contacts.get(c.id))?.status, 'subscribed');
  });
});
