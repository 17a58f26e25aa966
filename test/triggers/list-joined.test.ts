import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { hashToken, newToken } from '../../src/core/tokens.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { dripWorld, type DripWorld } from '../drips/helpers.ts';
import { ENGINES, testOptions } from '../helpers/engines.ts';

const enrolments = (n: Notify, sequence: number) =>
  n.context.store.db.selectFrom('notify_enrollments').select(['contact_id', 'status', 'next_send_at']).where('sequence_id', '=', sequence).orderBy('contact_id').execute();
const idOf = async (n: Notify, email: string) => (await n.contacts.get(email))!.id;

for (const engine of ENGINES) {
  let w: DripWorld;
  let seq: number;
  before(async () => {
    w = await dripWorld(engine);
    seq = (await w.notify.drips.createSequence({ name: 'welcome', trigger: { listJoined: 'news' }, steps: [{ delayMinutes: 10, subject: 'Hi', html: '<p>hi</p>' }] })).id;
  });
  after(() => w.close());

  test(`[${engine}] upsert, subscribe and import into the list enrol once; other lists do not`, async () => {
    const n = w.notify;
    assert.deepEqual((await n.drips.getSequence(seq))?.trigger, { listJoined: 'news' });
    await n.contacts.upsert({ email: 'a@example.com', lists: ['news'] });
    await n.contacts.upsert({ email: 'b@example.com', lists: ['other'] });
    await n.contacts.subscribe('b@example.com', 'news');
    await createContactsService(n.context).upsertMany([{ input: { email: 'c@example.com', lists: ['news'] } }, { input: { email: 'd@example.com', lists: ['other'] } }]);
    const rows = await enrolments(n, seq);
    assert.deepEqual(
      rows.map((r) => r.contact_id),
      [await idOf(n, 'a@example.com'), await idOf(n, 'b@example.com'), await idOf(n, 'c@example.com')].map(Number),
    );
    assert.ok(rows.every((r) => r.status === 'active' && Number(r.next_send_at) === w.clock.now() + 10 * 60_000), 'first step due after its delay');
    // the enrolled contact gets the step through the one drip run
    w.clock.advance(11 * 60_000);
    assert.equal((await n.drips.process()).sent, 3);
  });

  test(`[${engine}] leave and rejoin, or join again by upsert: never a second enrolment (once per contact and sequence, ever)`, async () => {
    const n = w.notify;
    await n.contacts.upsert({ email: 'e@example.com', lists: ['news'] });
    await n.contacts.unsubscribe('e@example.com', 'news');
    await n.contacts.subscribe('e@example.com', 'news');
    await n.contacts.upsert({ email: 'e@example.com', lists: ['news'] });
    const id = await idOf(n, 'e@example.com');
    assert.equal((await enrolments(n, seq)).filter((r) => Number(r.contact_id) === id).length, 1);
  });

  test(`[${engine}] a suppressed contact joining is not enrolled; a pending one only once confirmed`, async () => {
    const n = w.notify;
    await n.contacts.upsert({ email: 'u@example.com', status: 'unsubscribed' });
    await n.contacts.upsert({ email: 'u@example.com', lists: ['news'] });
    await n.contacts.upsert({ email: 'x@example.com', status: 'bounced', lists: ['news'] });
    const token = newToken();
    await createContactsService(n.context).upsert({ email: 'p@example.com', lists: ['news'] }, { initialStatus: 'pending', confirmation: { tokenHash: hashToken(token), at: w.clock.now() } });
    const ids = new Set((await enrolments(n, seq)).map((r) => Number(r.contact_id)));
    for (const e of ['u@example.com', 'x@example.com', 'p@example.com']) assert.ok(!ids.has(await idOf(n, e)), `${e} not enrolled`);
    const pending = await idOf(n, 'p@example.com');
    assert.equal(await n.context.store.optin.confirm(pending, hashToken(token), ['pending'], { at: w.clock.now(), ip: null }), true);
    assert.equal((await enrolments(n, seq)).filter((r) => Number(r.contact_id) === pending).length, 1, 'enrolled by the confirmation');
  });

  test(`[${engine}] two processes joining the same contact at once enrol it once`, async () => {
    const other = await createNotify({ ...testOptions(w.url), mailer: 'log', migrate: false });
    try {
      for (let i = 0; i < 5; i++) {
        const email = `race${i}@example.com`;
        await Promise.all([w.notify.contacts.upsert({ email, lists: ['news'] }), other.contacts.upsert({ email, lists: ['news'] }), other.contacts.upsert({ email, lists: ['news'] }).then(() => other.contacts.subscribe(email, 'news'))]);
        const id = await idOf(w.notify, email);
        assert.equal((await enrolments(w.notify, seq)).filter((r) => Number(r.contact_id) === id).length, 1, email);
      }
    } finally {
      await other.close();
    }
  });

  test(`[${engine}] a bad trigger is INVALID_INPUT and creates nothing`, async () => {
    for (const trigger of [{ listJoined: '' }, { listJoined: 5 }, { listJoined: 'news', extra: 1 }, { onOpen: 'x' }, 'news']) {
      await assert.rejects(w.notify.drips.createSequence({ name: `bad ${JSON.stringify(trigger)}`, trigger: trigger as never, steps: [{ delayMinutes: 0, subject: 's', html: 'x' }] }), { code: 'INVALID_INPUT' });
    }
    const created = await w.notify.drips.createSequence({ name: 'second', trigger: { listJoined: 'brand new list' }, steps: [{ delayMinutes: 0, subject: 's', html: 'x' }] });
    assert.deepEqual(created.trigger, { listJoined: 'brand new list' }, 'a missing list is created');
  });
}
