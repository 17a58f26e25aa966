import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { reached } from './helpers.ts';

forEachEngine('lists and membership', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('create, list and delete; names are unique whatever their case', async () => {
    const news = await notify.lists.create({ name: 'News', description: 'Monthly news', public: true });
    assert.deepEqual({ name: news.name, description: news.description, public: news.public, subscribers: news.subscribers }, { name: 'News', description: 'Monthly news', public: true, subscribers: 0 });
    for (const name of ['news', 'NEWS', 'News']) {
      await assert.rejects(notify.lists.create({ name }), (e) => isNotifyError(e, 'DUPLICATE'), name);
    }
    await notify.lists.create({ name: 'Ärzte' });
    await assert.rejects(notify.lists.create({ name: 'ärzte' }), (e) => isNotifyError(e, 'DUPLICATE'), 'non-ASCII letters fold too');
    await notify.lists.create({ name: 'temp' });
    assert.deepEqual((await notify.lists.list()).map((l) => l.name), ['News', 'temp', 'Ärzte'].sort());
    await notify.lists.delete('TEMP');
    assert.deepEqual((await notify.lists.list()).map((l) => l.name).sort(), ['News', 'Ärzte'].sort());
    await assert.rejects(notify.lists.delete('temp'), (e) => isNotifyError(e, 'NOT_FOUND'));
    for (const bad of ['', ' lead', 'a'.repeat(101), 'semi;colon', 42, null]) {
      await assert.rejects(notify.lists.create({ name: bad as never }), (e) => isNotifyError(e, 'INVALID_INPUT'), String(bad));
    }
    await assert.rejects(notify.lists.create({ name: 'x', public: 'yes' as never }), (e) => isNotifyError(e, 'INVALID_INPUT'));
    assert.equal((await notify.lists.list()).length, 2, 'refused lists left nothing behind');
  });

  test('per-list unsubscribe: the member leaves that list only; upsert does not bring them back, subscribe does', async () => {
    await notify.lists.create({ name: 'offers' });
    await notify.lists.create({ name: 'tips' });
    for (const who of ['ann', 'bob']) await notify.contacts.upsert({ email: `${who}@example.com`, lists: ['offers', 'tips'] });
    const left = await notify.contacts.unsubscribe('ann@example.com', 'OFFERS');
    assert.equal(left.status, 'subscribed', 'leaving one list is not a global unsubscribe');
    assert.deepEqual(left.lists, ['tips']);
    const member = await notify.context.store.db
      .selectFrom('notify_list_members')
      .select(['status', 'unsubscribed_at'])
      .where('contact_id', '=', left.id)
      .where('list_id', '=', (await notify.context.store.lists.byName('offers'))!.id)
      .executeTakeFirstOrThrow();
    assert.equal(member.status, 'unsubscribed');
    assert.ok(Number(member.unsubscribed_at) > 0, 'when they left is recorded');

    const offers = await notify.campaigns.create({ subject: 'Offer', html: '<p>x</p>', list: 'offers' });
    assert.deepEqual(await reached(notify, sink, offers.id), ['bob@example.com']);
    const tips = await notify.campaigns.create({ subject: 'Tip', html: '<p>x</p>', list: 'tips' });
    assert.deepEqual(await reached(notify, sink, tips.id), ['ann@example.com', 'bob@example.com'], "another list's campaign still reaches her");

    assert.deepEqual((await notify.contacts.upsert({ email: 'ann@example.com', lists: ['offers'] })).lists, ['tips'], 'an upsert does not re-subscribe');
    assert.deepEqual((await notify.contacts.subscribe('ann@example.com', 'offers')).lists, ['offers', 'tips'], 'an explicit subscribe does');
  });

  test('unsubscribe without a list is the unsubscribe link: contact unsubscribed, enrollments cancelled, event fired once', async () => {
    const seq = await notify.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 60, subject: 'Hi', text: 'hi' }] });
    const c = await notify.contacts.upsert({ email: 'cat@example.com', lists: ['tips'] });
    const enrollment = await notify.drips.enroll({ sequence: seq.id, contact: c.id });
    const fired: string[] = [];
    notify.on('notify:contact.unsubscribed', (p) => {
      fired.push(`${p.contact.email}:${p.source}`);
    });
    assert.equal((await notify.contacts.unsubscribe(c.id)).status, 'unsubscribed');
    await notify.contacts.unsubscribe('cat@example.com');
    assert.deepEqual(fired, ['cat@example.com:api']);
    assert.equal((await notify.drips.getEnrollment(enrollment.id))?.status, 'cancelled');
    const events = await notify.context.store.db.selectFrom('notify_events').select('type').where('contact_id', '=', c.id).execute();
    assert.deepEqual(events.map((e) => e.type), ['unsubscribe']);
    const tips = await notify.campaigns.create({ subject: 'Tip 2', html: '<p>x</p>', list: 'tips' });
    assert.deepEqual(await reached(notify, sink, tips.id), ['ann@example.com', 'bob@example.com'], 'a suppressed member is not reached');
  });

  test('subscribe lifts a transactional contact; pending and suppressed keep their status', async () => {
    await notify.send({ to: 'buyer@example.com', subject: 'Receipt', text: 'Thanks' });
    assert.equal((await notify.contacts.subscribe('buyer@example.com', 'tips')).status, 'subscribed');
    await notify.contacts.upsert({ email: 'wait@example.com', status: 'pending' });
    assert.equal((await notify.contacts.subscribe('wait@example.com', 'tips')).status, 'pending');
    assert.equal((await notify.contacts.subscribe('cat@example.com', 'tips')).status, 'unsubscribed');
  });

  test('unknown contacts and lists are NOT_FOUND; a campaign to a missing list is refused at create', async () => {
    await assert.rejects(notify.contacts.subscribe('nobody@example.com', 'tips'), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.contacts.subscribe('bob@example.com', 'nope'), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.contacts.unsubscribe('bob@example.com', 'nope'), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.contacts.unsubscribe(999999), (e) => isNotifyError(e, 'NOT_FOUND'));
    const before = (await notify.context.store.db.selectFrom('notify_campaigns').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    await assert.rejects(notify.campaigns.create({ subject: 'x', html: 'x', list: 'nope' }), (e) => isNotifyError(e, 'NOT_FOUND'));
    const after = (await notify.context.store.db.selectFrom('notify_campaigns').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    assert.equal(Number(after), Number(before), 'nothing stored');
    await assert.rejects(notify.lists.delete('tips'), (e) => isNotifyError(e, 'INVALID_INPUT'), 'a list campaigns send to cannot be deleted');
  });
});
