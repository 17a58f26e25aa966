import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { importText } from '../import/helpers.ts';

/**
 * The other half of status-by-upsert.test.ts: an explicit status that is not a suppression, given to
 * contacts.upsert, is written as given (DESIGN 4: only an explicit API call or a confirmed opt-in lifts a
 * suppression), and an import's `subscribed` cell moves a transactional contact to subscribed. Only the
 * suppressed statuses take the suppression flow; the others must not be turned into a mere initial status,
 * which an existing contact would never get.
 */
forEachEngine('an explicit non-suppressed status set by upsert or import', (h) => {
  const notify = useNotify(h);
  const fired: string[] = [];
  before(() => {
    const n = notify();
    n.on('notify:contact.unsubscribed', (p) => {
      fired.push(`unsubscribed:${p.contact.email}`);
    });
  });

  test('upsert with status subscribed lifts an unsubscribe, and a bounce', async () => {
    const n = notify();
    await n.contacts.upsert({ email: 'back@example.com', lists: ['news'] });
    await n.contacts.unsubscribe('back@example.com');
    await n.contacts.upsert({ email: 'bounced@example.com', status: 'bounced' });
    assert.equal((await n.contacts.get('back@example.com'))?.status, 'unsubscribed');
    fired.length = 0;
    assert.equal((await n.contacts.upsert({ email: 'back@example.com', status: 'subscribed' })).status, 'subscribed');
    assert.equal((await n.contacts.get('back@example.com'))?.status, 'subscribed', 'stored so, not only returned');
    assert.equal((await n.contacts.upsert({ email: 'bounced@example.com', status: 'subscribed' })).status, 'subscribed');
    assert.equal((await n.contacts.get('bounced@example.com'))?.status, 'subscribed');
    assert.deepEqual(fired, [], 'lifting a suppression fires no suppression event');
  });

  test('upsert with status pending moves a subscribed contact to pending', async () => {
    const n = notify();
    await n.contacts.upsert({ email: 'later@example.com' });
    assert.equal((await n.contacts.upsert({ email: 'later@example.com', status: 'pending' })).status, 'pending');
    assert.equal((await n.contacts.get('later@example.com'))?.status, 'pending');
  });

  test('upserting an enrolled contact, with no status or with its own status subscribed, leaves its enrollment active', async () => {
    const n = notify();
    const sequence = (await n.drips.createSequence({ name: 'stay', steps: [{ delayMinutes: 60, subject: 'Hi', text: 'hi' }] })).id;
    const c = await n.contacts.upsert({ email: 'stay@example.com' });
    const enrollment = (await n.drips.enroll({ sequence, contact: c.id })).id;
    await n.contacts.upsert({ email: 'stay@example.com', name: 'Stay' });
    await n.contacts.upsert({ email: 'stay@example.com', status: 'subscribed' });
    assert.equal((await n.drips.getEnrollment(enrollment))?.status, 'active', 'only a suppression ends enrollments');
    assert.equal((await n.contacts.get('stay@example.com'))?.status, 'subscribed');
  });

  test('an import row with status subscribed makes a transactional contact subscribed', async () => {
    const n = notify();
    await n.contacts.upsert({ email: 'receipt@example.com', status: 'transactional' });
    await n.contacts.upsert({ email: 'gone@example.com', status: 'unsubscribed' });
    const report = await importText(n, ['email,status', 'receipt@example.com,subscribed', 'gone@example.com,subscribed'].join('\n'));
    assert.deepEqual(report.rejected, []);
    assert.equal((await n.contacts.get('receipt@example.com'))?.status, 'subscribed');
    assert.equal((await n.contacts.get('gone@example.com'))?.status, 'unsubscribed', 'an import never lifts a suppression');
  });
});
