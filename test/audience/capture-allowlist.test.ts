import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { AJAX, capture, flashOf, form } from '../capture/helpers.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

const REFERER = { referer: 'http://localhost:3000/signup' };

forEachEngine('capture allowlist', (h) => {
  const notify = useNotify(h, { captureRateLimit: 0, captureLists: ['Partners'], captureAttributes: ['plan', 'city'] });
  const contacts = async () => Number((await notify().context.store.db.selectFrom('notify_contacts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  test('a public list and a captureLists list may be joined; attributes outside captureAttributes are dropped', async () => {
    await notify().lists.create({ name: 'News', public: true });
    const res = await capture(notify(), form({ email: 'ann@example.com', list: 'news', plan: 'pro', role: 'admin', is_admin: 'true' }), AJAX);
    assert.equal(res.status, 200);
    const ann = await notify().contacts.get('ann@example.com');
    assert.deepEqual(ann?.lists, ['News']);
    assert.deepEqual(ann?.attributes, { plan: 'pro' });
    assert.equal((await capture(notify(), form({ email: 'bob@example.com', list: 'partners' }), AJAX)).status, 200);
    assert.deepEqual((await notify().contacts.get('bob@example.com'))?.lists, ['Partners'], 'created on first sign-up');
  });

  test('a private list or an unknown one is 422 invalid_list (JSON and flash) and nothing is stored', async () => {
    await notify().lists.create({ name: 'staff' });
    const before = await contacts();
    for (const list of ['staff', 'STAFF', 'no-such-list']) {
      const res = await capture(notify(), form({ email: 'eve@example.com', list }), AJAX);
      assert.equal(res.status, 422, list);
      assert.equal(((await res.json()) as { code: string }).code, 'invalid_list');
    }
    const mixed = await capture(notify(), form({ email: 'eve@example.com', list: 'news' }) + '&list=staff', AJAX);
    assert.equal(mixed.status, 422, 'one refused list refuses the whole post');
    const page = await capture(notify(), form({ email: 'eve@example.com', list: 'staff' }), REFERER);
    assert.equal(page.status, 422);
    assert.equal(page.headers.get('location'), '/signup');
    assert.ok(flashOf(page.headers.getSetCookie(), 'notify_errors')?.some((m) => /cannot sign you up/.test(m)));
    assert.equal(await contacts(), before);
    assert.equal(await notify().contacts.get('eve@example.com'), undefined);
  });
});

test('captureLists and captureAttributes read comma-separated values from .env; captureAttributes unset keeps every attribute', async () => {
  const config = await loadConfig({}, { configFile: false, envFile: false, env: { NOTIFY_CAPTURE_LISTS: 'news, partners', NOTIFY_CAPTURE_ATTRIBUTES: 'plan,city' } });
  assert.deepEqual(config.captureLists, ['news', 'partners']);
  assert.deepEqual(config.captureAttributes, ['plan', 'city']);
  const defaults = await loadConfig({}, { configFile: false, envFile: false, env: {} });
  assert.deepEqual(defaults.captureLists, []);
  assert.equal(defaults.captureAttributes, undefined);
});
