import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/** Contacts in bulk (one INSERT per 500): the volume tests are about sending, not upserting. */
async function seedList(store: Store, list: string, count: number, prefix: string, now: number): Promise<void> {
  await store.db.insertInto('notify_lists').values({ name: list, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const listId = Number((await store.db.selectFrom('notify_lists').select('id').where('name', '=', list).executeTakeFirstOrThrow()).id);
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => {
      const email = `${prefix}${i + j}@example.com`;
      return { email, email_key: email, name: `P${i + j}`, status: 'subscribed', unsubscribe_token: `${prefix}tok${String(i + j).padStart(18, '0')}`.slice(-22), attributes: '{}', created_at: now, updated_at: now };
    });
    const ids = await store.db.insertInto('notify_contacts').values(rows).returning('id').execute();
    await store.db
      .insertInto('notify_list_members')
      .values(ids.map((r) => ({ list_id: listId, contact_id: Number(r.id), created_at: now })))
      .execute();
  }
}

const perRecipient = (sink: SmtpSink) => {
  const counts = new Map<string, number>();
  for (const m of sink.messages) for (const to of m.envelope.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  return counts;
};

forEachEngine('notify:send-campaign runs', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const clock = manualClock();
  before(async () => {
    sink = await startSmtpSink({ parse: false });
    notify = await createNotify({ ...testOptions(h.url, { mailer: sink.url, batchSize: 200 }), clock });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('a 1,050-contact campaign with batchSize 200 takes 6 runs; the sink holds 1,050 messages, once each', async () => {
    await seedList(notify.context.store, 'big', 1050, 'big', clock.now());
    const c = await notify.campaigns.create({ subject: 'Big news for {{ contact.name }}', html: '<p>Hi {{ contact.name }} <a href="https://example.com/x">x</a></p>', list: 'big' });
    const runs = [];
    for (let i = 0; i < 10; i++) {
      const r = await notify.campaigns.send(c.id);
      runs.push(r);
      if (r.done) break;
    }
    assert.equal(runs.length, 6);
    assert.deepEqual(
      runs.map((r) => r.sent),
      [200, 200, 200, 200, 200, 50],
    );
    assert.deepEqual(
      runs.map((r) => r.remaining),
      [850, 650, 450, 250, 50, 0],
    );
    await sink.waitFor(1050);
    const counts = perRecipient(sink);
    assert.equal(counts.size, 1050);
    assert.ok([...counts.values()].every((n) => n === 1));
    assert.equal((await notify.campaigns.get(c.id))?.status, 'sent');
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 1050, sent: 1050, failed: 0, opened: 0, clicked: 0 });
    const again = await notify.campaigns.send(c.id);
    assert.equal(again.sent, 0, 'a finished campaign sends nothing');
  });

  test('suppressed and pending members: suppressed rows, nothing delivered; pending are not in the audience', async () => {
    const start = sink.messages.length;
    await notify.contacts.upsert({ email: 'live@example.com', lists: ['mixed'] });
    await notify.contacts.upsert({ email: 'gone@example.com', lists: ['mixed'], status: 'unsubscribed' });
    await notify.contacts.upsert({ email: 'bounce@example.com', lists: ['mixed'], status: 'bounced' });
    await notify.contacts.upsert({ email: 'wait@example.com', lists: ['mixed'], status: 'pending' });
    const c = await notify.campaigns.create({ subject: 'Mixed', markdown: '# Hello', list: 'mixed' });
    const r = await notify.campaigns.send(c.id);
    assert.deepEqual({ sent: r.sent, suppressed: r.suppressed, failed: r.failed, remaining: r.remaining }, { sent: 1, suppressed: 2, failed: 0, remaining: 0 });
    await sink.waitFor(start + 1);
    await new Promise((res) => setTimeout(res, 50));
    assert.equal(sink.messages.length, start + 1);
    const counters = await notify.context.store.counters.get(c.id);
    assert.equal(counters.suppressed, 2);
    assert.equal(counters.total, 3);
  });

  test('campaign fromName/fromEmail beat the config defaults; a failing SMTP answer is a failed send', async () => {
    const start = sink.messages.length;
    await notify.contacts.upsert({ email: 'from1@example.com', lists: ['from'] });
    await notify.contacts.upsert({ email: 'from2@example.com', lists: ['from'] });
    const c = await notify.campaigns.create({ subject: 'From', html: '<p>x</p>', list: 'from', fromName: 'Shop', fromEmail: 'shop@example.org' });
    sink.failNext(1);
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.sent + r.failed, 2);
    assert.equal(r.failed, 1);
    await sink.waitFor(start + 1);
    const raw = sink.messages[start].raw.toString();
    assert.match(raw, /^From: Shop <shop@example\.org>\r$/m);
    assert.equal(sink.messages[start].envelope.from, 'shop@example.org');
    const stats = await notify.campaigns.getCampaignStats(c.id);
    assert.deepEqual([stats.total, stats.sent, stats.failed], [2, 1, 1]);
  });

  test('rows left sending by a crashed run become failed/interrupted after staleLockMinutes and are never resent', async () => {
    await notify.contacts.upsert({ email: 'crash1@example.com', lists: ['crash'] });
    await notify.contacts.upsert({ email: 'crash2@example.com', lists: ['crash'] });
    const c = await notify.campaigns.create({ subject: 'Crash', html: '<p>x</p>', list: 'crash' });
    const store = notify.context.store;
    // what a run killed between claim and delivery leaves behind
    const crash1 = await notify.contacts.get('crash1@example.com');
    const [row] = await store.sends.claim([{ token: 'crashcrashcrashcrash01', campaign_id: c.id, contact_id: crash1!.id, to_email: crash1!.email, subject: 'Crash', status: 'sending' }], clock.now());
    await store.counters.add(new Map([[c.id, { total: 1 }]]));
    const start = sink.messages.length;
    const first = await notify.campaigns.send(c.id);
    assert.equal(first.interrupted, 0, 'a fresh claim is not touched');
    assert.equal(first.sent, 1);
    assert.equal(first.remaining, 0);
    assert.equal(first.done, true, 'the campaign is sent: nobody is left to claim');
    clock.advance(minutes(31));
    // the campaign is already marked sent; the next run still settles what the crash left in flight
    const second = await notify.campaigns.send(c.id);
    assert.equal(second.interrupted, 1);
    assert.equal(second.done, true);
    assert.equal(second.sent, 0);
    const after = await store.sends.getById(row.id);
    assert.equal(after?.status, 'failed');
    assert.equal(after?.error, 'interrupted');
    await sink.waitFor(start + 1);
    await new Promise((res) => setTimeout(res, 50));
    assert.deepEqual(
      sink.messages.slice(start).map((m) => m.envelope.to[0]),
      ['crash2@example.com'],
    );
    const stats = await notify.campaigns.getCampaignStats(c.id);
    assert.deepEqual([stats.total, stats.sent, stats.failed], [2, 1, 1]);
  });

  test('bad campaign input is refused at create', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ subject: '', html: 'x' }, 'INVALID_INPUT'],
      [{ subject: 'a\r\nb', html: 'x' }, 'HEADER_INJECTION'],
      [{ subject: 'x' }, 'INVALID_INPUT'],
      [{ subject: 'x', html: 'x', markdown: 'y' }, 'INVALID_INPUT'],
      [{ subject: 'x', markdownFile: '../../etc/passwd' }, 'PATH_ESCAPE'],
      [{ subject: 'x', html: '{% if %}' }, 'TEMPLATE_ERROR'],
      [{ subject: 'x', html: 'x', fromEmail: 'bad' }, 'INVALID_EMAIL'],
      [{ subject: 'x', html: 'x', fromName: 'a\nb' }, 'HEADER_INJECTION'],
      [{ subject: 'x', html: 'x', layout: '../secret' }, 'INVALID_INPUT'],
      [{ subject: 'x', html: 'x', layout: 'notify/layouts/misspelt' }, 'NOT_FOUND'],
      [{ subject: 'x', html: 'x', headers: { 'X-A': 'b\r\nc' } }, 'HEADER_INJECTION'],
    ];
    for (const [input, code] of bad) {
      await assert.rejects(notify.campaigns.create(input as never), (e) => isNotifyError(e, code as never), JSON.stringify(input));
    }
    await assert.rejects(notify.campaigns.send(999_999), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.campaigns.send(-1), (e) => isNotifyError(e, 'INVALID_INPUT'));
  });
});

forEachEngine('overlapping send-campaign runs', (h) => {
  let sink: SmtpSink;
  let a: Notify;
  let b: Notify;
  before(async () => {
    sink = await startSmtpSink({ parse: false });
    a = await createNotify(testOptions(h.url, { mailer: sink.url, batchSize: 400 }));
    b = await createNotify(testOptions(h.url, { mailer: sink.url, batchSize: 400 }));
  });
  after(async () => {
    await a.close();
    await b.close();
    await sink.close();
  });

  test('two instances running the same campaign at once send each contact exactly once', async () => {
    await seedList(a.context.store, 'overlap', 1050, 'ov', Date.now());
    const c = await a.campaigns.create({ subject: 'Overlap', html: '<p>x</p>', list: 'overlap' });
    let sent = 0;
    for (let round = 0; round < 10; round++) {
      const [ra, rb] = await Promise.all([a.campaigns.send(c.id), b.campaigns.send(c.id)]);
      sent += ra.sent + rb.sent;
      assert.equal(ra.failed + rb.failed, 0);
      if (ra.done || rb.done) break;
    }
    assert.equal(sent, 1050);
    await sink.waitFor(1050);
    await new Promise((res) => setTimeout(res, 100));
    const counts = perRecipient(sink);
    assert.equal(sink.messages.length, 1050);
    assert.equal(counts.size, 1050);
    assert.deepEqual(await a.campaigns.getCampaignStats(c.id), { total: 1050, sent: 1050, failed: 0, opened: 0, clicked: 0 });
  });
});
