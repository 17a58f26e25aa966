import assert from 'node:assert/strict';
import { test } from 'node:test';
import { events } from '../../src/index.ts';
import { loadConfig } from '../../src/config.ts';
import { dripWorld } from '../drips/helpers.ts';
import { ENGINES } from '../helpers/engines.ts';

const BODY = '{"id":"evt_1","type":"notify:email.sent","created_at":"2026-01-01T00:00:00.000Z","data":{}}';
const NOW = Date.UTC(2026, 0, 1, 12);
const T = Math.floor(NOW / 1000);

test('verify accepts the signed body and rejects a tampered body, another secret, a time outside the tolerance, malformed headers', () => {
  const header = events.sign(BODY, 'whsec_a', T);
  assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  assert.equal(events.verify(BODY, header, 'whsec_a', { now: NOW }), true);
  assert.equal(events.verify(Buffer.from(BODY), header, 'whsec_a', { now: NOW }), true, 'raw bytes too');
  assert.equal(events.verify(BODY.replace('email.sent', 'email.failed'), header, 'whsec_a', { now: NOW }), false, 'tampered body');
  assert.equal(events.verify(`${BODY} `, header, 'whsec_a', { now: NOW }), false, 'one byte more');
  assert.equal(events.verify(BODY, header, 'whsec_b', { now: NOW }), false, 'another secret');
  assert.equal(events.verify(BODY, header, '', { now: NOW }), false, 'an empty secret verifies nothing');
  assert.equal(events.verify(BODY, header, 'whsec_a', { now: NOW + 301_000 }), false, 'older than the default 300 s');
  assert.equal(events.verify(BODY, header, 'whsec_a', { now: NOW - 301_000 }), false, 'from the future');
  assert.equal(events.verify(BODY, header, 'whsec_a', { now: NOW + 3_000_000, toleranceSeconds: 3600 }), true, 'a wider tolerance');
  assert.equal(events.verify(BODY, header, 'whsec_a', { now: NOW + 11_000, toleranceSeconds: 10 }), false, 'a narrower one');
  const v1 = header.split('v1=')[1];
  for (const bad of [undefined, null, '', 'garbage', `v1=${v1}`, `t=${T}`, `t=${T},v1=${v1.slice(1)}`, `t=${T},v1=${'0'.repeat(64)}`, `t=abc,v1=${v1}`, `t=${T + 1},v1=${v1}`]) {
    assert.equal(events.verify(BODY, bad, 'whsec_a', { now: NOW }), false, String(bad));
  }
  assert.equal(events.verify(BODY, `t=${T},v1=${'0'.repeat(64)},v1=${v1}`, 'whsec_a', { now: NOW }), true, 'one of several v1 (secret rotation)');
});

test('webhooksOut: bad entries are CONFIG_INVALID naming what is wrong; JSON text from .env or the environment works', async () => {
  const bad: [unknown, RegExp][] = [
    [[{ url: 'ftp://example.com/x', secret: 's' }], /webhooksOut\.0\.url.*http\(s\) URL/],
    [[{ url: 'example.com/hook', secret: 's' }], /webhooksOut\.0\.url/],
    [[{ url: 'https://example.com/x', secret: '' }], /webhooksOut\.0\.secret.*must not be empty/],
    [[{ url: 'https://example.com/x' }], /webhooksOut\.0\.secret/],
    [[{ url: 'https://example.com/x', secret: 's', events: ['notify:email.sent', 'notify:email.bounced'] }], /webhooksOut\.0\.events\.1.*unknown event "notify:email\.bounced"/],
    [[{ url: 'https://example.com/x', secret: 's', retries: 3 }], /webhooksOut\.0.*retries/],
    [[{ url: 'https://a.example/x', secret: 's' }, { url: 'https://a.example/x', secret: 't' }], /names one URL twice/],
    ['{not json', /webhooksOut.*must be a list/],
    [{ url: 'https://example.com/x', secret: 's' }, /must be a list/],
  ];
  for (const [value, message] of bad) {
    await assert.rejects(loadConfig({ webhooksOut: value as never }, { configFile: false, envFile: false, env: {} }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, message);
      return true;
    });
  }
  const fromEnv = await loadConfig({}, { configFile: false, envFile: false, env: { NOTIFY_WEBHOOKS_OUT: '[{"url":"https://app.example/hooks","secret":"whsec_1","events":["notify:email.opened"]}]' } });
  assert.deepEqual(fromEnv.webhooksOut, [{ url: 'https://app.example/hooks', secret: 'whsec_1', events: ['notify:email.opened'] }]);
});

for (const engine of ENGINES) {
  test(`[${engine}] no event without its cause: a rolled-back outcome leaves no outbox row and tells no listener`, async () => {
    const w = await dripWorld(engine, { webhooksOut: [{ url: 'http://127.0.0.1:9/x', secret: 's' }] });
    try {
      const heard: unknown[] = [];
      w.notify.on('notify:email.sent', (e) => void heard.push(e));
      const contact = await w.notify.contacts.upsert({ email: 'q@example.com' });
      const store = w.notify.context.store;
      const send = await store.sends.create({ token: 'tok', contact_id: contact.id, to_email: contact.email, subject: 's', status: 'sending' }, w.clock.now());
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.sends.finish([{ id: send.id, status: 'sent' }], w.clock.now());
          throw new Error('crash before commit');
        }),
        /crash before commit/,
      );
      assert.equal((await store.db.selectFrom('notify_outbound_events').selectAll().where('type', '=', 'notify:email.sent').execute()).length, 0);
      assert.equal(heard.length, 0);
      assert.equal((await store.sends.getById(send.id))?.status, 'sending', 'and no outcome without its event');
      await store.transaction((tx) => tx.sends.finish([{ id: send.id, status: 'sent' }], w.clock.now()));
      assert.equal((await store.db.selectFrom('notify_outbound_events').selectAll().where('type', '=', 'notify:email.sent').execute()).length, 1);
      assert.equal(heard.length, 1);
    } finally {
      await w.close();
    }
  });
}

for (const engine of ENGINES) {
  test(`[${engine}] erasing a contact drops the outgoing webhook rows that name the address, and only those`, async () => {
    const w = await dripWorld(engine, { webhooksOut: [{ url: 'http://127.0.0.1:9/x', secret: 's' }] });
    try {
      await w.notify.contacts.upsert({ email: 'gone_%@example.com', lists: ['news'] });
      await w.notify.contacts.upsert({ email: 'stays@example.com', lists: ['news'] });
      const bodies = async () => (await w.notify.context.store.db.selectFrom('notify_outbound_events').select('body').execute()).map((r) => r.body);
      assert.equal((await bodies()).length, 2);
      assert.equal(await w.notify.contacts.erase('gone_%@example.com'), true);
      const left = await bodies();
      assert.equal(left.length, 1);
      assert.match(left[0], /stays@example\.com/);
    } finally {
      await w.close();
    }
  });
}
