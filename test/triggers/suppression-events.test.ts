import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { StoreTx } from '../../src/store/index.ts';
import type { NotifyEventName } from '../../src/core/events.ts';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { dripWorld, type DripWorld } from '../drips/helpers.ts';
import { ENGINES } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { startReceiver } from './receiver.ts';

const SECRET = 'whsec_suppress';
const rows = (w: DripWorld) => w.notify.context.store.db.selectFrom('notify_outbound_events').selectAll().orderBy('id').execute();
const statusOf = async (w: DripWorld, email: string) => (await w.notify.contacts.get(email))?.status;

/** every application event of these names, as listeners hear it */
function listen(w: DripWorld, names: NotifyEventName[]) {
  const heard: { name: string; payload: Record<string, unknown> }[] = [];
  for (const name of names) w.notify.on(name, (payload) => void heard.push({ name, payload: payload as Record<string, unknown> }));
  return heard;
}

test('webhooksOut events: the four suppression and failure events are known; the in-process name of the failure is refused with its wire name as the hint', async () => {
  const load = (events: string[]) => loadConfig({ webhooksOut: [{ url: 'https://app.example.com/h', secret: 's', events }] }, { configFile: false, envFile: false, env: {} });
  const ok = await load(['notify:contact.unsubscribed', 'notify:contact.bounced', 'notify:contact.complained', 'notify:enrollment.failed']);
  assert.equal(ok.webhooksOut[0].events?.length, 4);
  for (const [bad, hint] of [
    ['notify_enrollment_failed', /did you mean notify:enrollment\.failed\?/],
    ['notify:contact.unsubscribe', /did you mean notify:contact\.unsubscribed\?/],
    ['order.created', /unknown event "order\.created": use notify:contact\.subscribed, /],
  ] as const) {
    await assert.rejects(load([bad]), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, hint);
      return true;
    });
  }
});

for (const engine of ENGINES) {
  const worlds: DripWorld[] = [];
  after(async () => {
    for (const w of worlds) await w.close();
  });
  const world = async (events?: string[]) => {
    const receiver = await startReceiver();
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: SECRET, ...(events ? { events } : {}) }] });
    worlds.push(w);
    return { w, receiver };
  };

  test(`[${engine}] one-click, link, API and list unsubscribes, a bounce and a complaint reach webhooksOut signed, with the listener's payload and the contact as { id, email }`, async (t) => {
    const { w, receiver } = await world(['notify:contact.unsubscribed', 'notify:contact.bounced', 'notify:contact.complained']);
    t.after(() => receiver.close());
    const heard = listen(w, ['notify:contact.unsubscribed', 'notify:contact.bounced', 'notify:contact.complained']);
    const n = w.notify;
    const ann = await n.contacts.upsert({ email: 'ann@example.com' });
    const bob = await n.contacts.upsert({ email: 'bob@example.com' });
    const cyd = await n.contacts.upsert({ email: 'cyd@example.com' });
    const dee = await n.contacts.upsert({ email: 'dee@example.com' });
    const eve = await n.contacts.upsert({ email: 'eve@example.com', lists: ['news', 'deals'] });
    assert.equal((await call(n, `/notify/unsubscribe/${ann.unsubscribe_token}`, { method: 'POST' })).status, 200);
    assert.equal((await call(n, `/notify/unsubscribe/${ann.unsubscribe_token}`, { method: 'POST' })).status, 200, 'a duplicate one-click POST');
    assert.equal((await call(n, `/notify/unsubscribe/${bob.unsubscribe_token}`)).status, 200);
    await n.contacts.unsubscribe('cyd@example.com');
    await n.contacts.unsubscribe('eve@example.com', 'news');
    const applied = await applyWebhookEvents(n.context, 'postmark', [
      { type: 'bounce', email: 'dee@example.com', message_id: 'pm-1', id: 'b1' },
      { type: 'complaint', email: 'ann@example.com', message_id: 'pm-2', id: 'c1' },
      { type: 'soft_bounce', email: 'bob@example.com', message_id: 'pm-3', id: 's1' },
    ], 'delivery-1');
    assert.equal(applied.applied, 3);
    await applyWebhookEvents(n.context, 'postmark', [{ type: 'bounce', email: 'dee@example.com', message_id: 'pm-1', id: 'b1' }], 'delivery-2');

    const written = await rows(w);
    assert.deepEqual(
      written.map((r) => r.type),
      ['notify:contact.unsubscribed', 'notify:contact.unsubscribed', 'notify:contact.unsubscribed', 'notify:contact.unsubscribed', 'notify:contact.bounced', 'notify:contact.complained'],
      'one row an event, none for the duplicate POST, the soft bounce or the redelivered bounce',
    );
    assert.equal(heard.length, written.length, 'listeners heard each once too');

    assert.equal((await n.events.deliver()).delivered, 6);
    const got = receiver.received;
    assert.ok(got.every((e) => n.events.verify(e.body, e.signature, SECRET, { now: w.clock.now() })), 'signed');
    assert.deepEqual(new Set(got.map((e) => e.id)), new Set(written.map((r) => r.event_id)), 'the ids written with the cause');
    const at = new Date(w.clock.now()).toISOString();
    assert.deepEqual(
      got.map((e) => [e.type, e.data]),
      [
        ['notify:contact.unsubscribed', { contact: { id: ann.id, email: 'ann@example.com' }, source: 'one-click', sendId: null }],
        ['notify:contact.unsubscribed', { contact: { id: bob.id, email: 'bob@example.com' }, source: 'link', sendId: null }],
        ['notify:contact.unsubscribed', { contact: { id: cyd.id, email: 'cyd@example.com' }, source: 'api', sendId: null }],
        ['notify:contact.unsubscribed', { contact: { id: eve.id, email: 'eve@example.com' }, source: 'api', sendId: null, list: 'news' }],
        ['notify:contact.bounced', { contact: { id: dee.id, email: 'dee@example.com' }, message_id: 'pm-1', provider: 'postmark' }],
        ['notify:contact.complained', { contact: { id: ann.id, email: 'ann@example.com' }, message_id: 'pm-2', provider: 'postmark' }],
      ],
    );
    assert.ok(got.every((e) => JSON.parse(e.body).created_at === at));
    // in-process: the same names and fields, the whole contact as it is after the change
    assert.deepEqual(
      heard.map((h) => [h.name, (h.payload.contact as { status: string }).status]),
      [
        ['notify:contact.unsubscribed', 'unsubscribed'],
        ['notify:contact.unsubscribed', 'unsubscribed'],
        ['notify:contact.unsubscribed', 'unsubscribed'],
        ['notify:contact.unsubscribed', 'subscribed'],
        ['notify:contact.bounced', 'bounced'],
        ['notify:contact.complained', 'complained'],
      ],
    );
    assert.equal((heard[0].payload.contact as { unsubscribe_token: string }).unsubscribe_token, ann.unsubscribe_token, 'the token stays in the process');
    assert.ok(!got.some((e) => e.body.includes(ann.unsubscribe_token)), 'and never leaves it');
    assert.deepEqual((heard[3].payload.contact as { lists: string[] }).lists, ['deals']);

    // bad inputs write nothing: an unknown list, a list the contact is not on, an unknown address
    await assert.rejects(n.contacts.unsubscribe('bob@example.com', 'nope'), (err: Error & { code?: string }) => err.code === 'NOT_FOUND');
    await n.contacts.unsubscribe('bob@example.com', 'deals');
    assert.equal((await applyWebhookEvents(n.context, 'postmark', [{ type: 'bounce', email: 'nobody@example.com', message_id: 'pm-9', id: 'b9' }], 'delivery-3')).unknownContacts, 1);
    assert.equal((await rows(w)).length, written.length, 'no event for any of them');
    // erasure drops the person's events from the outbox, as it does every event naming the address
    await n.contacts.erase('dee@example.com');
    assert.ok(!(await rows(w)).some((r) => r.body.includes('dee@example.com')));
  });

  test(`[${engine}] a drip enrollment failing for good is notify_enrollment_failed in-process and notify:enrollment.failed on the wire, with the same payload`, async (t) => {
    const { w, receiver } = await world();
    t.after(() => receiver.close());
    const heard = listen(w, ['notify_enrollment_failed']);
    await w.notify.contacts.upsert({ email: 'ann@example.com' });
    await w.notify.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Hi', html: '<p>hi</p>' }] });
    const enrollment = await w.notify.drips.enroll({ contact: 'ann@example.com', sequence: 'welcome' });
    w.mailer.fail = 'false';
    for (let i = 0; i < 3; i++) {
      await w.notify.drips.process();
      w.clock.advance(6 * 60_000);
    }
    assert.equal((await w.notify.drips.getEnrollment(enrollment.id))?.status, 'failed');
    const failed = (await rows(w)).filter((r) => r.type === 'notify:enrollment.failed');
    assert.equal(failed.length, 1, 'once, on the last attempt only');
    assert.equal(heard.length, 1);
    await w.notify.events.deliver();
    const got = receiver.received.filter((e) => e.type === 'notify:enrollment.failed');
    assert.equal(got.length, 1);
    assert.deepEqual(got[0].data, JSON.parse(JSON.stringify(heard[0].payload)), 'the listener payload, as JSON');
    assert.deepEqual(got[0].data, {
      enrollment: { id: enrollment.id, sequence_id: enrollment.sequence_id, contact_id: enrollment.contact_id, status: 'failed', step_index: 0, next_send_at: null, attempts: 3, last_error: 'mailer returned false (attempt 3 of 3; no more retries)' },
      error: 'mailer returned false (attempt 3 of 3; no more retries)',
    });
    assert.ok(w.notify.events.verify(got[0].body, got[0].signature, SECRET, { now: w.clock.now() }));
  });

  test(`[${engine}] a cause whose transaction fails after its event was built stores neither the cause nor the event, and fires nothing`, async (t) => {
    const { w, receiver } = await world();
    t.after(() => receiver.close());
    const heard = listen(w, ['notify:contact.unsubscribed', 'notify:contact.bounced', 'notify:contact.complained', 'notify_enrollment_failed']);
    const n = w.notify;
    const ann = await n.contacts.upsert({ email: 'ann@example.com', lists: ['news'] });
    await n.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Hi', html: '<p>hi</p>' }] });
    const enrollment = await n.drips.enroll({ contact: 'ann@example.com', sequence: 'welcome' });
    const before = (await rows(w)).length;
    // a transaction that wrote an event fails at its commit, once the cause has written all it writes
    const store = n.context.store;
    const transaction = store.transaction;
    let built = 0;
    store.transaction = <T>(fn: (tx: StoreTx) => Promise<T>) =>
      transaction.call(store, async (tx: StoreTx) => {
        let mine = 0;
        const add: StoreTx['outbox']['add'] = (events, now) => {
          mine += events.length;
          return tx.outbox.add(events, now);
        };
        const result = await fn({ ...tx, outbox: { add } });
        built += mine;
        if (mine > 0) throw new Error('commit refused');
        return result;
      }) as Promise<T>;
    t.after(() => void (store.transaction = transaction));

    await assert.rejects(call(n, `/notify/unsubscribe/${ann.unsubscribe_token}`, { method: 'POST' }).then((r) => (r.status >= 500 ? Promise.reject(new Error(String(r.status))) : r)));
    await assert.rejects(n.contacts.unsubscribe('ann@example.com'), /commit refused/);
    await assert.rejects(n.contacts.unsubscribe('ann@example.com', 'news'), /commit refused/);
    await assert.rejects(applyWebhookEvents(n.context, 'postmark', [{ type: 'bounce', email: 'ann@example.com', message_id: 'm', id: 'b' }], 'd'), /commit refused/);
    await assert.rejects(applyWebhookEvents(n.context, 'postmark', [{ type: 'complaint', email: 'ann@example.com', message_id: 'm', id: 'c' }], 'd'), /commit refused/);
    w.mailer.fail = 'false';
    await n.context.store.db.updateTable('notify_enrollments').set({ attempts: 2 }).where('id', '=', enrollment.id).execute();
    await assert.rejects(n.drips.process(), /commit refused/);
    assert.ok(built >= 6, `each cause built its event before the failure (${built})`);

    store.transaction = transaction;
    assert.equal(await statusOf(w, 'ann@example.com'), 'subscribed', 'no cause without its event');
    assert.deepEqual((await n.contacts.get('ann@example.com'))?.lists, ['news']);
    assert.equal((await rows(w)).length, before, 'no event without its cause');
    assert.deepEqual(heard, [], 'and no listener heard of it');
    assert.equal((await n.drips.getEnrollment(enrollment.id))?.status, 'processing', 'the failed run left its claim to be reclaimed');
    assert.equal((await n.events.deliver()).delivered, before);
  });
}
