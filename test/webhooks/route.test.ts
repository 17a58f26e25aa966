import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { parseJson } from '../../src/store/rows.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';
import { fakeFetch, TEST_CERT, TEST_CERT_URL, sesBounce, sesComplaint, signedSns, subscriptionConfirmation, TEST_NOW, TEST_REGION, TEST_TOPIC } from './helpers.ts';

const post = (notify: Notify, body: string, headers: Record<string, string> = { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' }) =>
  call(notify, '/notify/webhook', { method: 'POST', body, headers });

const notification = (message: string) => JSON.stringify(signedSns({ Type: 'Notification', Message: message }));

async function withMessageId(notify: Notify, sendId: number, messageId: string) {
  await notify.context.store.db.updateTable('notify_sends').set({ message_id: messageId }).where('id', '=', sendId).execute();
}

async function eventsFor(notify: Notify, contactId: number) {
  const rows = await notify.context.store.db.selectFrom('notify_events').selectAll().where('contact_id', '=', contactId).orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, send_id: r.send_id === null ? null : Number(r.send_id), campaign_id: r.campaign_id === null ? null : Number(r.campaign_id), metadata: parseJson(r.metadata) }));
}

/** An active enrollment through the public drips API (a sequence of its own per contact). */
async function activeEnrollment(notify: Notify, contactId: number): Promise<number> {
  const sequence = await notify.drips.createSequence({ name: `webhook-${contactId}`, steps: [{ delayMinutes: 60, subject: 'Later', text: 'later' }] });
  const enrollment = await notify.drips.enroll({ contact: contactId, sequence: sequence.id });
  assert.equal(enrollment.status, 'active');
  return enrollment.id;
}

const enrollmentStatus = async (notify: Notify, id: number) =>
  (await notify.context.store.db.selectFrom('notify_enrollments').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

forEachEngine('POST /notify/webhook with the SES/SNS driver', (h) => {
  const f = fakeFetch({ [TEST_CERT_URL]: TEST_CERT, [`https://sns.${TEST_REGION}.amazonaws.com/?*`]: '<ConfirmSubscriptionResponse/>' });
  const notify = useNotify(h, { webhookDriver: 'ses', snsTopicArns: [TEST_TOPIC], fetch: f.fetch, clock: manualClock(TEST_NOW) });

  test('a hard bounce: contact bounced, enrollments cancelled, event row linked to the send, counter, one application event', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId });
    await withMessageId(notify(), send.id, 'ses-hard-1');
    const enrollment = await activeEnrollment(notify(), send.contactId);
    const email = (await notify().contacts.get(send.contactId))!.email;
    const fired: unknown[] = [];
    const off = notify().on('notify:contact.bounced', (p) => void fired.push(p));
    const body = notification(sesBounce('Permanent', [email.toUpperCase()], 'ses-hard-1'));
    const res = await post(notify(), body);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.equal((await notify().contacts.get(send.contactId))?.status, 'bounced');
    assert.equal(await enrollmentStatus(notify(), enrollment), 'cancelled');
    assert.deepEqual(await eventsFor(notify(), send.contactId), [{ type: 'bounce', send_id: send.id, campaign_id: campaignId, metadata: { provider: 'ses', message_id: 'ses-hard-1' } }]);
    assert.equal((await notify().campaigns.getCampaignReport(campaignId)).bounced, 1);
    assert.equal(fired.length, 1);
    const payload = fired[0] as { contact: { id: number; status: string }; message_id: string | null; provider: string | null };
    assert.deepEqual([payload.contact.id, payload.contact.status, payload.message_id, payload.provider], [send.contactId, 'bounced', 'ses-hard-1', 'ses']);

    // The same SNS message again (a retry or a replay): applied once.
    const again = await post(notify(), body);
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { received: 1, applied: 0, duplicates: 1, unknownContacts: 0 });
    assert.equal((await eventsFor(notify(), send.contactId)).length, 1);
    assert.equal((await notify().campaigns.getCampaignReport(campaignId)).bounced, 1);
    assert.equal(fired.length, 1);
    off();
  });

  test('the same delivery five times at once: applied once', async () => {
    const send = await insertSend(notify());
    const email = (await notify().contacts.get(send.contactId))!.email;
    let fired = 0;
    const off = notify().on('notify:contact.bounced', () => void fired++);
    const body = notification(sesBounce('Permanent', [email], 'ses-race-1'));
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(notify(), body).then(async (r) => ({ status: r.status, json: await r.json() }))));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200]);
    assert.equal(answers.filter((a) => a.json.applied === 1).length, 1);
    assert.equal((await eventsFor(notify(), send.contactId)).length, 1);
    assert.equal(fired, 1);
    off();
  });

  test('a complaint: complained, enrollments cancelled, a complaint event row and counter, notify:contact.complained', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId });
    await withMessageId(notify(), send.id, 'ses-c-1');
    const enrollment = await activeEnrollment(notify(), send.contactId);
    const email = (await notify().contacts.get(send.contactId))!.email;
    const fired: { message_id: string | null; provider: string | null }[] = [];
    const off = notify().on('notify:contact.complained', (p) => void fired.push(p));
    const res = await post(notify(), notification(sesComplaint([email], 'ses-c-1', 'eventType')));
    assert.equal(res.status, 200);
    assert.equal((await notify().contacts.get(send.contactId))?.status, 'complained');
    assert.equal(await enrollmentStatus(notify(), enrollment), 'cancelled');
    assert.deepEqual(fired.map((p) => [p.message_id, p.provider]), [['ses-c-1', 'ses']]);
    assert.deepEqual(await eventsFor(notify(), send.contactId), [{ type: 'complaint', send_id: send.id, campaign_id: campaignId, metadata: { provider: 'ses', message_id: 'ses-c-1' } }]);
    assert.equal((await notify().campaigns.getCampaignReport(campaignId)).complained, 1);
    off();
  });

  test('a soft bounce: one soft_bounce event row linked to the send, the contact unchanged', async () => {
    const send = await insertSend(notify());
    await withMessageId(notify(), send.id, '<soft-1@example.com>');
    const enrollment = await activeEnrollment(notify(), send.contactId);
    const email = (await notify().contacts.get(send.contactId))!.email;
    const body = notification(sesBounce('Transient', [email], 'soft-1@example.com'));
    assert.equal((await post(notify(), body)).status, 200);
    assert.equal((await post(notify(), body)).status, 200);
    assert.equal((await notify().contacts.get(send.contactId))?.status, 'subscribed');
    assert.equal(await enrollmentStatus(notify(), enrollment), 'active');
    assert.deepEqual(await eventsFor(notify(), send.contactId), [{ type: 'soft_bounce', send_id: send.id, campaign_id: null, metadata: { provider: 'ses', message_id: 'soft-1@example.com' } }]);
  });

  test('a bounce for an unknown address changes nothing and still answers 200', async () => {
    const res = await post(notify(), notification(sesBounce('Permanent', ['nobody@example.com'])));
    assert.equal(res.status, 200);
    assert.equal((await res.json()).unknownContacts, 1);
    assert.equal(await notify().contacts.get('nobody@example.com'), undefined);
  });

  test('a bad signature is 403 and nothing is applied', async () => {
    const send = await insertSend(notify());
    const email = (await notify().contacts.get(send.contactId))!.email;
    const good = signedSns({ Type: 'Notification', Message: sesBounce('Permanent', [email]) });
    const variants = [
      { ...good, Message: sesBounce('Permanent', [email, 'other@example.com']) },
      { ...good, Signature: good.Signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
      { ...good, SigningCertURL: good.SigningCertURL.replace('https:', 'http:') },
      { ...good, TopicArn: 'arn:aws:sns:eu-west-1:123456789012:someone-else' },
    ];
    for (const v of variants) assert.equal((await post(notify(), JSON.stringify(v))).status, 403);
    assert.equal((await post(notify(), sesBounce('Permanent', [email]), { 'content-type': 'application/json', 'x-amz-sns-rawdelivery': 'true' })).status, 403);
    assert.equal((await post(notify(), '')).status, 403);
    assert.equal((await post(notify(), 'junk')).status, 403);
    assert.equal((await notify().contacts.get(send.contactId))?.status, 'subscribed');
    assert.deepEqual(await eventsFor(notify(), send.contactId), []);
  });

  test('a subscription confirmation is confirmed at the topic region SNS host', async () => {
    const before = f.calls.length;
    const res = await post(notify(), JSON.stringify(subscriptionConfirmation()), { 'content-type': 'text/plain', 'x-amz-sns-message-type': 'SubscriptionConfirmation' });
    assert.equal(res.status, 200);
    const confirm = f.calls.slice(before).find((c) => c.url.includes('ConfirmSubscription'));
    assert.ok(confirm?.url.startsWith(`https://sns.${TEST_REGION}.amazonaws.com/?Action=ConfirmSubscription&TopicArn=`));
  });

  test('a genuinely signed confirmation from a topic outside snsTopicArns: 403 before any network call', async () => {
    const before = f.calls.length;
    const topic = `arn:aws:sns:${TEST_REGION}:999999999999:attacker`;
    const other = signedSns({ Type: 'SubscriptionConfirmation', TopicArn: topic, Token: 'tok', Message: 'subscribe?', SubscribeURL: 'https://example.com/' });
    const headers = { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'SubscriptionConfirmation', 'x-amz-sns-topic-arn': topic };
    assert.equal((await post(notify(), JSON.stringify(other), headers)).status, 403);
    assert.equal(f.calls.length, before);
  });

  test('a Notification correctly signed from a topic outside snsTopicArns: 403, the contact still subscribed, no receipt, no certificate fetch', async () => {
    const send = await insertSend(notify());
    const email = (await notify().contacts.get(send.contactId))!.email;
    const topic = `arn:aws:sns:${TEST_REGION}:999999999999:someone-elses-feedback`;
    const message = signedSns({ Type: 'Notification', TopicArn: topic, Message: sesBounce('Permanent', [email], 'foreign-topic-1') });
    const headers = { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification', 'x-amz-sns-topic-arn': topic };
    const receipts = () => notify().context.store.db.selectFrom('notify_webhook_receipts').select('message_id').where('provider', '=', 'ses').execute();
    const receiptsBefore = (await receipts()).length;
    const fetchesBefore = f.calls.length;
    assert.equal((await post(notify(), JSON.stringify(message), headers)).status, 403);
    assert.equal((await notify().contacts.get(send.contactId))?.status, 'subscribed');
    assert.deepEqual(await eventsFor(notify(), send.contactId), []);
    assert.equal((await receipts()).length, receiptsBefore);
    assert.equal(f.calls.length, fetchesBefore, 'refused before the signing certificate is fetched');
  });

  test('an old message is refused', async () => {
    const old = signedSns({ Type: 'Notification', Message: sesBounce('Permanent', ['x@example.com']), Timestamp: new Date(TEST_NOW - 2 * 3_600_000).toISOString() });
    assert.equal((await post(notify(), JSON.stringify(old))).status, 403);
  });

  test('GET is 405; an over-large body 413', async () => {
    assert.equal((await call(notify(), '/notify/webhook')).status, 405);
    assert.equal((await post(notify(), 'x'.repeat(5 * 1024 * 1024 + 1))).status, 413);
  });
});

forEachEngine('webhook configuration', (h) => {
  const noDriver = useNotify(h);

  test('no webhookDriver: 400', async () => {
    const res = await call(noDriver(), '/notify/webhook', { method: 'POST', body: notification(sesBounce('Permanent', ['a@example.com'])) });
    assert.equal(res.status, 400);
  });

  test('the environment override notify.webhookDriver, by name or class name', async () => {
    for (const value of ['ses', 'SesSnsWebhookDriver']) {
      const notify = await createNotify({ ...testOptions(h.url), env: { 'notify.webhookDriver': value, 'notify.snsTopicArns': TEST_TOPIC } });
      try {
        assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body: 'unsigned' })).status, 403, value);
      } finally {
        await notify.close();
      }
    }
  });

  test('an unknown driver fails createNotify naming the option', async () => {
    await assert.rejects(createNotify(testOptions(h.url, { webhookDriver: 'sparkpost' })), (err: Error & { code?: string }) => err.code === 'CONFIG_INVALID' && /webhookDriver/.test(err.message));
    await assert.rejects(createNotify(testOptions(h.url, { webhookDriver: './does-not-exist.js#Driver' })), /Option 'webhookDriver'.*could not load/);
    await assert.rejects(createNotify(testOptions(h.url, { webhookDriver: { verifySignature: () => true } as never })), /missing isSubscriptionConfirmation, confirmSubscription, parseEvents/);
    await assert.rejects(createNotify(testOptions(h.url, { webhookDriver: 'postmark' })), /postmarkWebhookUsername/);
    await assert.rejects(createNotify(testOptions(h.url, { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: 'nope' })), /sendgridWebhookPublicKey/);
    await assert.rejects(createNotify(testOptions(h.url, { webhookDriver: 'mailgun' })), /mailgunWebhookSigningKey/);
  });

  test('a custom driver from a module specifier, constructed with the config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-driver-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      join(dir, 'my-driver.mjs'),
      `export class MyDriver {
        constructor({ config }) { this.secret = config.adminToken; }
        verifySignature(req) { return req.headers.get('x-secret') === this.secret; }
        isSubscriptionConfirmation() { return false; }
        confirmSubscription() {}
        parseEvents(req) { const b = JSON.parse(req.text); return [{ type: 'complaint', email: b.email, message_id: b.id, id: b.id }]; }
      }`,
    );
    const notify = await createNotify(testOptions(h.url, { webhookDriver: './my-driver.mjs#MyDriver', cwd: dir, adminToken: 's3cret' }));
    try {
      const contact = await notify.contacts.upsert({ email: 'custom@example.com' });
      const body = JSON.stringify({ email: 'custom@example.com', id: 'c-1' });
      assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body, headers: { 'x-secret': 'wrong' } })).status, 403);
      assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body, headers: { 'x-secret': 's3cret' } })).status, 200);
      assert.equal((await notify.contacts.get(contact.id))?.status, 'complained');
      const receipts = await notify.context.store.db.selectFrom('notify_webhook_receipts').selectAll().where('provider', '=', 'MyDriver').execute();
      assert.deepEqual(receipts.map((r) => r.message_id), ['c-1']);
    } finally {
      await notify.close();
    }
  });

  test('a throwing or malformed custom driver never answers 5xx or applies anything', async () => {
    const victim = 'victim@example.com';
    const malformed = [
      { type: 'delete_everything', email: victim, message_id: '' },
      { type: 'bounce', email: [victim], message_id: '' },
      { type: 'complaint', email: victim },
      { type: 'bounce', email: victim, message_id: '', id: 7 },
      null,
      victim,
    ];
    const notify = await createNotify(
      testOptions(h.url, {
        webhookDriver: {
          name: 'sloppy',
          verifySignature: (r: { text: string }) => {
            if (r.text === 'throw') throw new Error('boom');
            return true;
          },
          isSubscriptionConfirmation: (r: { text: string }) => r.text === 'confirm',
          confirmSubscription: () => {
            throw new Error('cannot confirm');
          },
          parseEvents: (r: { text: string }) => {
            if (r.text === 'parse-throws') throw new Error('boom');
            return r.text === 'bad' ? malformed : 'nope';
          },
        } as never,
      }),
    );
    try {
      const contact = await notify.contacts.upsert({ email: victim });
      const enrollment = await activeEnrollment(notify, contact.id);
      assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body: 'throw' })).status, 403);
      const bad = await call(notify, '/notify/webhook', { method: 'POST', body: 'bad' });
      assert.equal(bad.status, 200);
      assert.deepEqual(await bad.json(), { received: 0, applied: 0, duplicates: 0, unknownContacts: 0 });
      assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body: 'other' })).status, 400);
      assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body: 'parse-throws' })).status, 400);
      assert.equal((await call(notify, '/notify/webhook', { method: 'POST', body: 'confirm' })).status, 502);

      assert.equal((await notify.contacts.get(contact.id))?.status, 'subscribed');
      assert.deepEqual(await eventsFor(notify, contact.id), []);
      assert.equal(await enrollmentStatus(notify, enrollment), 'active');
      const receipts = await notify.context.store.db.selectFrom('notify_webhook_receipts').select('message_id').where('provider', '=', 'sloppy').execute();
      assert.deepEqual(receipts, []);
    } finally {
      await notify.close();
    }
  });
});
