import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { importContacts } from '../../src/core/import.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { AJAX, capture, confirmLink, form, recordingMailer } from '../capture/helpers.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/*
 * A password reset or a receipt sent with notify.send() is nobody's subscription: the contact it
 * creates is `transactional`, and no campaign reaches it until the person (or the application) subscribes it.
 */

const statusOf = async (n: Notify, email: string) => (await n.contacts.get(email))?.status;
const oneOff = (n: Notify, to: string) => n.send({ to, subject: 'Reset your password', text: 'Your code is 123456' });

/** Sends a campaign to everyone (no list) or a list and returns the addresses it reached over SMTP, sorted. */
async function campaignReach(n: Notify, sink: SmtpSink, list?: string): Promise<string[]> {
  const start = sink.messages.length;
  const campaign = await n.campaigns.create({ subject: 'Spring promotion', html: '<p>20% off</p>', list });
  const run = await n.campaigns.send(campaign.id);
  assert.equal(run.remaining, 0);
  await sink.waitFor(start + run.sent);
  const rows = await n.context.store.db.selectFrom('notify_sends').select('to_email').where('campaign_id', '=', campaign.id).execute();
  const reached = sink.messages.slice(start).flatMap((m) => m.envelope.to);
  assert.deepEqual(rows.map((r) => r.to_email).sort(), [...reached].sort(), 'one send row per address reached, no other');
  return reached.sort();
}

forEachEngine('transactional contacts', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, captureRateLimit: 0 }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('send() to an unknown address makes a transactional contact the next campaign without a list does not reach', async () => {
    await notify.contacts.upsert({ email: 'fan@example.com' });
    const reset = await oneOff(notify, 'reset@example.com');
    assert.equal(reset.status, 'sent');
    assert.deepEqual(sink.messages.at(-1)?.envelope.to, ['reset@example.com']);
    const contact = await notify.contacts.get('reset@example.com');
    assert.equal(contact?.status, 'transactional');
    assert.equal(reset.contact_id, contact?.id, 'the send is still linked to its contact (unsubscribe link, webhooks)');
    assert.deepEqual(await campaignReach(notify, sink), ['fan@example.com']);
    assert.equal((await oneOff(notify, 'reset@example.com')).status, 'sent', 'one-off mail still reaches it');
  });

  test('existing contacts keep their status when send() reaches them', async () => {
    await notify.contacts.upsert({ email: 'member@example.com' });
    await notify.contacts.upsert({ email: 'waiting@example.com', status: 'pending' });
    for (const [email, status] of [
      ['member@example.com', 'subscribed'],
      ['waiting@example.com', 'pending'],
    ]) {
      assert.equal((await oneOff(notify, email)).status, 'sent');
      assert.equal(await statusOf(notify, email), status, email);
    }
  });

  test('a list campaign does not reach a transactional member of the list', async () => {
    await notify.contacts.upsert({ email: 'vip-app@example.com', lists: ['vip'], status: 'transactional' });
    await notify.contacts.upsert({ email: 'vip-fan@example.com', lists: ['vip'] });
    assert.deepEqual(await campaignReach(notify, sink, 'vip'), ['vip-fan@example.com']);
  });

  test('an upsert or an import without a status subscribes a transactional contact; status transactional keeps it', async () => {
    for (const email of ['upsert@example.com', 'kept@example.com', 'import@example.com', 'posted@example.com']) await oneOff(notify, email);
    const upserted = await notify.contacts.upsert({ email: 'upsert@example.com', name: 'Una' });
    assert.equal(upserted.status, 'subscribed', 'what the same upsert makes of an unknown address');
    const kept = await notify.contacts.upsert({ email: 'kept@example.com', name: 'Kim', status: 'transactional' });
    assert.deepEqual([kept.status, kept.name], ['transactional', 'Kim']);
    async function* csv() {
      yield 'email,name\nimport@example.com,Ivo\n';
    }
    assert.equal((await importContacts(createContactsService(notify.context), csv())).imported, 1);
    assert.equal(await statusOf(notify, 'import@example.com'), 'subscribed');
    assert.equal((await capture(notify, form({ email: 'posted@example.com' }), AJAX)).status, 200);
    assert.equal(await statusOf(notify, 'posted@example.com'), 'subscribed', 'a capture post is a sign-up');
    assert.ok((await notify.contacts.get('posted@example.com'))?.consent_at, 'with its consent recorded');
    const reach = await campaignReach(notify, sink);
    for (const email of ['upsert@example.com', 'import@example.com', 'posted@example.com']) assert.ok(reach.includes(email), email);
    assert.ok(!reach.includes('kept@example.com'));
  });
});

forEachEngine('transactional contacts and double opt-in', (h) => {
  const mailer = recordingMailer();
  const notify = useNotify(h, { mailer, doubleOptIn: true, captureRateLimit: 0, captureLists: ['news'] });

  test('a capture post makes a transactional contact pending with a confirmation email; the confirmed link subscribes it', async () => {
    await oneOff(notify(), 'later@example.com');
    assert.equal(await statusOf(notify(), 'later@example.com'), 'transactional');
    assert.equal((await capture(notify(), form({ email: 'later@example.com', list: 'news' }), AJAX)).status, 200);
    assert.equal(await statusOf(notify(), 'later@example.com'), 'pending');
    const mail = mailer.sent.at(-1)!;
    assert.equal(mail.subject, 'Please confirm your subscription');
    const link = new URL(confirmLink(mail));
    assert.equal((await call(notify(), link.pathname, { method: 'POST' })).status, 200);
    assert.equal(await statusOf(notify(), 'later@example.com'), 'subscribed');
  });
});
