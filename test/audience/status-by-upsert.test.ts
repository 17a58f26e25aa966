import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { contactTimeline } from '../../src/core/timeline.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { importText } from '../import/helpers.ts';

/**
 * A suppressed status (unsubscribed, bounced, complained) set by contacts.upsert or by an import is
 * the same suppression as the unsubscribe link or a bounce webhook: the contact's drip enrollments
 * end, an event row is written and the application event fires, once. A contact created with that
 * status fires it too, marked `created` (test/audience/created-suppressed.test.ts).
 */
forEachEngine('a suppressed status set by upsert or import', (h) => {
  const notify = useNotify(h);
  const fired: string[] = [];
  let sequence = 0;
  before(async () => {
    const n = notify();
    n.on('notify:contact.unsubscribed', (p) => {
      fired.push(`unsubscribed:${p.contact.email}:${p.source}`);
    });
    n.on('notify:contact.bounced', (p) => {
      fired.push(`bounced:${p.contact.email}`);
    });
    n.on('notify:contact.complained', (p) => {
      fired.push(`complained:${p.contact.email}`);
    });
    sequence = (await n.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 60, subject: 'Hi', text: 'hi' }] })).id;
  });

  /** a subscribed contact with an active enrollment, and the enrollment's id */
  async function enrolled(email: string): Promise<number> {
    const c = await notify().contacts.upsert({ email, lists: ['news'] });
    return (await notify().drips.enroll({ sequence, contact: c.id })).id;
  }
  const eventTypes = async (n: Notify, email: string) => {
    const c = (await n.contacts.get(email))!;
    return (await n.context.store.db.selectFrom('notify_events').select('type').where('contact_id', '=', c.id).orderBy('id').execute()).map((e) => e.type);
  };

  test('upsert with status unsubscribed: enrollment cancelled, event row, application event once', async () => {
    const n = notify();
    const enrollment = await enrolled('ann@example.com');
    fired.length = 0;
    assert.equal((await n.contacts.upsert({ email: 'ann@example.com', status: 'unsubscribed' })).status, 'unsubscribed');
    assert.equal((await n.drips.getEnrollment(enrollment))?.status, 'cancelled');
    assert.deepEqual(await eventTypes(n, 'ann@example.com'), ['unsubscribe']);
    const timeline = await contactTimeline(n.context, (await n.contacts.get('ann@example.com'))!);
    assert.deepEqual(
      timeline.filter((e) => e.kind === 'event').map((e) => [e.type, e.source]),
      [['unsubscribe', 'api']],
      "the person's timeline says where the opt-out came from",
    );
    await n.contacts.upsert({ email: 'ann@example.com', status: 'unsubscribed', name: 'Ann' });
    assert.deepEqual(fired, ['unsubscribed:ann@example.com:api'], 'once: the second upsert changed no status');
    assert.equal((await n.contacts.get('ann@example.com'))?.name, 'Ann', 'the other fields are still written');
  });

  test('upsert with status bounced or complained: the same flow with its own event', async () => {
    const n = notify();
    const bob = await enrolled('bob@example.com');
    const cy = await enrolled('cy@example.com');
    fired.length = 0;
    await n.contacts.upsert({ email: 'bob@example.com', status: 'bounced' });
    await n.contacts.upsert({ email: 'cy@example.com', status: 'complained' });
    assert.deepEqual(fired, ['bounced:bob@example.com', 'complained:cy@example.com']);
    assert.equal((await n.drips.getEnrollment(bob))?.status, 'cancelled');
    assert.equal((await n.drips.getEnrollment(cy))?.status, 'cancelled');
    assert.deepEqual(await eventTypes(n, 'bob@example.com'), ['bounce']);
    assert.deepEqual(await eventTypes(n, 'cy@example.com'), ['complaint']);
  });

  test('a contact created with a suppressed status is stored so, with the event once', async () => {
    const n = notify();
    fired.length = 0;
    assert.equal((await n.contacts.upsert({ email: 'new@example.com', status: 'unsubscribed' })).status, 'unsubscribed');
    assert.deepEqual(fired, ['unsubscribed:new@example.com:api']);
    assert.deepEqual(await eventTypes(n, 'new@example.com'), ['unsubscribe']);
  });

  test('an import with a status column: existing contacts go through the flow, new ones are created with the status and its event', async () => {
    const n = notify();
    const dee = await enrolled('dee@example.com');
    const eve = await enrolled('eve@example.com');
    fired.length = 0;
    const csv = ['email,status', 'dee@example.com,unsubscribed', 'eve@example.com,bounced', 'fresh@example.com,unsubscribed', 'ann@example.com,unsubscribed'].join('\n');
    const report = await importText(n, csv);
    assert.deepEqual(report.rejected, []);
    assert.deepEqual(fired.sort(), ['bounced:eve@example.com', 'unsubscribed:dee@example.com:api', 'unsubscribed:fresh@example.com:api']);
    assert.equal((await n.drips.getEnrollment(dee))?.status, 'cancelled');
    assert.equal((await n.drips.getEnrollment(eve))?.status, 'cancelled');
    assert.equal((await n.contacts.get('dee@example.com'))?.status, 'unsubscribed');
    assert.equal((await n.contacts.get('eve@example.com'))?.status, 'bounced');
    assert.equal((await n.contacts.get('fresh@example.com'))?.status, 'unsubscribed');
    assert.deepEqual(await eventTypes(n, 'dee@example.com'), ['unsubscribe']);
    assert.deepEqual(await eventTypes(n, 'ann@example.com'), ['unsubscribe'], 'already unsubscribed: nothing again');
  });
});
