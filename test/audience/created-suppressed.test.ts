import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { importText } from '../import/helpers.ts';

/**
 * A contact created with a suppressed status (contacts.upsert({ status }), an import of another
 * provider's unsubscribes or cleaned addresses) fires the same event as a contact that had another
 * status: an application or a second service that mirrors "who notify will not mail" through
 * `webhooksOut` learns of every such address, whether notify knew it before or not. The payload
 * says `created: true`, so a receiver that only wants opt-outs made now can tell them apart.
 */
const HOOK = 'http://127.0.0.1:9/hook';
const TYPES = ['notify:contact.unsubscribed', 'notify:contact.bounced', 'notify:contact.complained'] as const;

forEachEngine('a contact created with a suppressed status', (h) => {
  const notify = useNotify(h, { webhooksOut: [{ url: HOOK, secret: 'a-secret-of-enough-length', events: [...TYPES] }] });
  const fired: string[] = [];
  before(() => {
    const n = notify();
    n.on('notify:contact.unsubscribed', (p) => {
      fired.push(`unsubscribed:${p.contact.email}:${p.contact.status}:${p.source}:${p.created === true}`);
    });
    n.on('notify:contact.bounced', (p) => {
      fired.push(`bounced:${p.contact.email}:${p.contact.status}:${p.created === true}`);
    });
    n.on('notify:contact.complained', (p) => {
      fired.push(`complained:${p.contact.email}:${p.contact.status}:${p.created === true}`);
    });
  });

  /** the outgoing webhook bodies written for that address, oldest first */
  const outbound = async (n: Notify, email: string) => {
    const rows = await n.context.store.db.selectFrom('notify_outbound_events').select(['type', 'body', 'endpoint']).orderBy('id').execute();
    return rows
      .map((r) => ({ type: r.type, endpoint: r.endpoint, data: JSON.parse(r.body).data }))
      .filter((r) => r.data?.contact?.email === email)
      .map((r) => ({ type: r.type, endpoint: r.endpoint, data: r.data }));
  };
  const eventTypes = async (n: Notify, email: string) => {
    const c = (await n.contacts.get(email))!;
    return (await n.context.store.db.selectFrom('notify_events').select('type').where('contact_id', '=', c.id).orderBy('id').execute()).map((e) => e.type);
  };

  test('upsert of a new address with status unsubscribed: stored so, the event fires once, the webhook carries it', async () => {
    const n = notify();
    fired.length = 0;
    const c = await n.contacts.upsert({ email: 'new@example.com', status: 'unsubscribed', lists: ['news'] });
    assert.equal(c.status, 'unsubscribed');
    assert.deepEqual(fired, ['unsubscribed:new@example.com:unsubscribed:api:true']);
    assert.deepEqual(await outbound(n, 'new@example.com'), [
      { type: 'notify:contact.unsubscribed', endpoint: HOOK, data: { contact: { id: c.id, email: 'new@example.com' }, source: 'api', sendId: null, created: true } },
    ]);
    assert.deepEqual(await eventTypes(n, 'new@example.com'), ['unsubscribe'], 'on the person timeline too');
    // the same upsert again changes nothing and fires nothing
    await n.contacts.upsert({ email: 'new@example.com', status: 'unsubscribed' });
    assert.equal(fired.length, 1);
    assert.equal((await outbound(n, 'new@example.com')).length, 1);
  });

  test('bounced and complained: their own events', async () => {
    const n = notify();
    fired.length = 0;
    const b = await n.contacts.upsert({ email: 'gone@example.com', status: 'bounced' });
    await n.contacts.upsert({ email: 'angry@example.com', status: 'complained' });
    assert.deepEqual(fired, ['bounced:gone@example.com:bounced:true', 'complained:angry@example.com:complained:true']);
    assert.deepEqual(await outbound(n, 'gone@example.com'), [
      { type: 'notify:contact.bounced', endpoint: HOOK, data: { contact: { id: b.id, email: 'gone@example.com' }, message_id: null, provider: null, created: true } },
    ]);
    assert.deepEqual(await eventTypes(n, 'angry@example.com'), ['complaint']);
  });

  test('an existing contact given the status: the event without `created` (as before)', async () => {
    const n = notify();
    await n.contacts.upsert({ email: 'old@example.com', lists: ['news'] });
    fired.length = 0;
    await n.contacts.upsert({ email: 'old@example.com', status: 'unsubscribed' });
    assert.deepEqual(fired, ['unsubscribed:old@example.com:unsubscribed:api:false']);
    assert.equal((await outbound(n, 'old@example.com'))[0]?.data.created, undefined);
  });

  test('an import creating unsubscribed and cleaned (bounced) contacts: one event each, subscribed rows none', async () => {
    const n = notify();
    fired.length = 0;
    const csv = ['email,status', 'imp1@example.com,unsubscribed', 'imp2@example.com,cleaned', 'imp3@example.com,subscribed', 'imp1@example.com,unsubscribed'].join('\n');
    const report = await importText(n, csv);
    assert.deepEqual(report.rejected, []);
    assert.deepEqual(fired.sort(), ['bounced:imp2@example.com:bounced:true', 'unsubscribed:imp1@example.com:unsubscribed:api:true']);
    assert.equal((await outbound(n, 'imp1@example.com')).length, 1, 'an address twice in the file: once');
    assert.deepEqual(await outbound(n, 'imp3@example.com'), []);
    assert.equal((await n.contacts.get('imp2@example.com'))?.status, 'bounced');
  });

  test('an erased address that had opted out comes back opted out: the new contact fires the event', async () => {
    const n = notify();
    await n.contacts.upsert({ email: 'back@example.com', status: 'unsubscribed' });
    await n.contacts.erase('back@example.com');
    fired.length = 0;
    const c = await n.contacts.upsert({ email: 'back@example.com' });
    assert.equal(c.status, 'unsubscribed');
    assert.deepEqual(fired, ['unsubscribed:back@example.com:unsubscribed:api:true']);
  });

  test('a contact created subscribed fires no suppression event', async () => {
    const n = notify();
    fired.length = 0;
    await n.contacts.upsert({ email: 'fine@example.com', lists: ['news'] });
    assert.deepEqual(fired, []);
  });
});
