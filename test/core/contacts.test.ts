import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';

forEachEngine('contacts API', (h) => {
  const notify = useNotify(h);

  test('upsert and get by id or email (any case)', async () => {
    const c = await notify().contacts.upsert({ email: ' Bob@Example.com ', name: 'Bob', lists: ['news'], attributes: { plan: 'pro' } });
    assert.equal(c.email, 'Bob@Example.com');
    assert.equal(c.status, 'subscribed');
    assert.match(c.unsubscribe_token, /^[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(c.lists, ['news']);
    assert.deepEqual((await notify().contacts.get('bob@example.COM'))?.id, c.id);
    assert.deepEqual((await notify().contacts.get(c.id))?.email, c.email);
    const again = await notify().contacts.upsert({ email: 'bob@example.com', attributes: { seats: 3 } });
    assert.deepEqual(again.attributes, { plan: 'pro', seats: 3 });
  });

  test('bad input is refused and stores nothing', async () => {
    for (const bad of ['', 'no-at', 'a@b', 'x@example.com\r\nBcc: evil@example.com', 'a b@example.com', `${'x'.repeat(300)}@example.com`]) {
      await assert.rejects(notify().contacts.upsert({ email: bad }), (e) => isNotifyError(e, 'INVALID_EMAIL'), bad);
    }
    await assert.rejects(notify().contacts.upsert({ email: 'n@example.com', name: 'a\r\nb' }), (e) => isNotifyError(e, 'INVALID_INPUT'));
    await assert.rejects(notify().contacts.upsert({ email: 'n@example.com', attributes: { big: 'x'.repeat(20_000) } }), (e) => isNotifyError(e, 'INVALID_INPUT'));
    await assert.rejects(notify().contacts.upsert({ email: 'n@example.com', status: 'vip' as never }), (e) => isNotifyError(e, 'INVALID_INPUT'));
    assert.equal(await notify().contacts.get('n@example.com'), undefined);
  });

  test('erase forgets the person but remembers an opt-out', async () => {
    const c = await notify().contacts.upsert({ email: 'erase@example.com', status: 'unsubscribed' });
    assert.equal(await notify().contacts.erase('erase@example.com'), true);
    assert.equal(await notify().contacts.get(c.id), undefined);
    assert.equal(await notify().contacts.erase('erase@example.com'), false);
    const back = await notify().contacts.upsert({ email: 'erase@example.com' });
    assert.equal(back.status, 'unsubscribed', 'suppression survives erasure');
    assert.notEqual(back.unsubscribe_token, c.unsubscribe_token);
  });

  test('a closed instance refuses work with a clear code', async () => {
    const other = await createNotify(testOptions(h.url, { migrate: false }));
    await other.close();
    await assert.rejects(other.drips.process(), (e) => isNotifyError(e, 'CLOSED'));
  });
});
