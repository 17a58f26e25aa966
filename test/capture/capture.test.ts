import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { AJAX, capture, flashOf, form } from './helpers.ts';

const REFERER = { referer: 'http://localhost:3000/signup?utm=x' };
const countContacts = async (n: Notify) => Number((await n.context.store.db.selectFrom('notify_contacts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

forEachEngine('capture endpoint', (h) => {
  const notify = useNotify(h, { captureRateLimit: 0, captureLists: ['news', 'a', 'b', 'extra'] });

  test('a form post is stored with consent and answered 303 back with the notify_success flash', async () => {
    const res = await capture(notify(), form({ email: 'Ann@Example.com', name: 'Ann', list: 'news', plan: 'pro', notify_hp: '' }), REFERER);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/signup?utm=x');
    assert.deepEqual(flashOf(res.headers.getSetCookie(), 'notify_success'), ['Thanks for subscribing!']);
    assert.ok(res.headers.getSetCookie().some((c) => c.startsWith('notify_errors=;') && /Max-Age=0/.test(c)), 'an old error flash is cleared');
    const c = await notify().contacts.get('ann@example.com');
    assert.equal(c?.status, 'subscribed');
    assert.equal(c?.name, 'Ann');
    assert.deepEqual(c?.lists, ['news']);
    assert.deepEqual(c?.attributes, { plan: 'pro' }, 'notify_hp is never an attribute');
    assert.equal(c?.consent_source, 'http://localhost:3000/signup');
    assert.ok(c?.consent_at instanceof Date);
    const row = await notify().context.store.db.selectFrom('notify_contacts').select('consent_ip').where('id', '=', c!.id).executeTakeFirstOrThrow();
    assert.equal(row.consent_ip, null, 'no IP without trackIpAddress');
  });

  test('redirect field wins on success; AJAX gets JSON; multipart and JSON bodies work', async () => {
    const r1 = await capture(notify(), form({ email: 'r1@example.com', redirect: '/thanks?from=form' }), REFERER);
    assert.equal(r1.status, 303);
    assert.equal(r1.headers.get('location'), '/thanks?from=form');
    const r2 = await capture(notify(), form({ email: 'r2@example.com' }), AJAX);
    assert.equal(r2.status, 200);
    assert.deepEqual(await r2.json(), { ok: true, message: 'Thanks for subscribing!' });
    const fd = new FormData();
    fd.append('email', 'r3@example.com');
    fd.append('list', 'a');
    fd.append('list', 'b');
    const r3 = await capture(notify(), fd, { 'x-requested-with': 'XMLHttpRequest' });
    assert.equal(r3.status, 200);
    assert.deepEqual((await notify().contacts.get('r3@example.com'))?.lists, ['a', 'b']);
    const r4 = await capture(notify(), JSON.stringify({ email: 'r4@example.com', tags: ['x', 'y'] }), { 'content-type': 'application/json' });
    assert.equal(r4.status, 200);
    assert.deepEqual((await notify().contacts.get('r4@example.com'))?.attributes, { tags: ['x', 'y'] });
    const r5 = await capture(notify(), form({ email: 'r5@example.com' }));
    assert.equal(r5.headers.get('location'), '/', 'no Referer and no redirect: the site root');
  });

  test('bad input: a clear 4xx in both shapes and nothing stored', async () => {
    const before = await countContacts(notify());
    const big = 'x'.repeat(70 * 1024);
    const multipartFile = new FormData();
    multipartFile.append('email', 'file@example.com');
    multipartFile.append('doc', new Blob(['%PDF']), 'a.pdf');
    const cases: [string, string | FormData | Uint8Array, Record<string, string>, number, string][] = [
      ['oversize body', `email=big%40example.com&x=${big}`, {}, 413, 'too_large'],
      ['oversize declared length', 'email=a%40example.com', { 'content-length': String(10 * 1024 * 1024) }, 413, 'too_large'],
      ['bad percent-encoding', 'email=bad%ZZ%40example.com', {}, 400, 'malformed'],
      ['truncated UTF-8 escape', 'email=a%40example.com&name=%E0%A4%A', {}, 400, 'malformed'],
      ['raw invalid UTF-8', new Uint8Array([...Buffer.from('email=a%40example.com&name='), 0xff, 0xfe]), {}, 400, 'malformed'],
      ['malformed multipart', '--xx\r\nContent-Disposition: form-data; name="email"\r\n\r\nm@example.com', { 'content-type': 'multipart/form-data; boundary=yy' }, 400, 'malformed'],
      ['multipart without boundary', 'email=m@example.com', { 'content-type': 'multipart/form-data' }, 400, 'malformed'],
      ['file upload', multipartFile, {}, 400, 'file_upload'],
      ['bad JSON', '{"email": ', { 'content-type': 'application/json' }, 400, 'malformed'],
      ['nested JSON', '{"email":"j@example.com","x":{"y":1}}', { 'content-type': 'application/json' }, 400, 'malformed'],
      ['JSON array', '["j@example.com"]', { 'content-type': 'application/json' }, 400, 'malformed'],
      ['wrong content type', 'email=t@example.com', { 'content-type': 'text/plain' }, 415, 'unsupported_type'],
      ['no content type', 'email=t@example.com', { 'content-type': '' }, 415, 'unsupported_type'],
      ['missing email', 'name=Nobody', {}, 422, 'invalid_email'],
      ['invalid email', 'email=not-an-address', {}, 422, 'invalid_email'],
      ['email header injection', 'email=a%40example.com%0D%0ABcc%3A%20x%40example.com', {}, 422, 'invalid_email'],
      ['CRLF in name', 'email=crlf%40example.com&name=Ann%0D%0ABcc%3A%20x%40example.com', {}, 422, 'invalid_name'],
      ['too many entries', `email=many%40example.com&${Array.from({ length: 120 }, (_, i) => `f=${i}`).join('&')}`, {}, 413, 'too_many_fields'],
      ['too many distinct fields', `email=many%40example.com&${Array.from({ length: 45 }, (_, i) => `f${i}=1`).join('&')}`, {}, 422, 'invalid_field'],
      ['huge field value', `email=huge%40example.com&bio=${'y'.repeat(1500)}`, {}, 422, 'invalid_field'],
      ['attributes over 16 KB in total', `email=attrs%40example.com&${Array.from({ length: 30 }, (_, i) => `f${i}=${'z'.repeat(900)}`).join('&')}`, {}, 422, 'invalid_field'],
      ['bad field name', 'email=fn%40example.com&%3Cscript%3E=1', {}, 422, 'invalid_field'],
      ['list name with markup', 'email=ln%40example.com&list=%3Cb%3E', {}, 422, 'invalid_list'],
      ['two emails', 'email=a%40example.com&email=b%40example.com', {}, 422, 'invalid_email'],
      ['open redirect //', 'email=or1%40example.com&redirect=%2F%2Fevil.com', {}, 400, 'bad_redirect'],
      ['open redirect https', 'email=or2%40example.com&redirect=https%3A%2F%2Fevil.com', {}, 400, 'bad_redirect'],
      ['open redirect backslash', 'email=or3%40example.com&redirect=%2F%5Cevil.com', {}, 400, 'bad_redirect'],
    ];
    for (const [what, body, headers, status, code] of cases) {
      const ajax = await capture(notify(), body, { ...AJAX, ...headers });
      assert.equal(ajax.status, status, `${what} (AJAX)`);
      const json = (await ajax.json()) as { ok: boolean; code: string; errors: string[] };
      assert.equal(json.ok, false, what);
      assert.equal(json.code === 'invalid_email' && code === 'invalid_email' ? code : json.code, code, `${what}: ${JSON.stringify(json)}`);
      assert.ok(json.errors[0]?.length > 0, what);
      // a FormData body is consumed; a JSON body is AJAX by definition
      if (body instanceof FormData || headers['content-type'] === 'application/json') continue;
      const page = await capture(notify(), body, { ...REFERER, ...headers });
      assert.equal(page.status, status, `${what} (form)`);
      assert.equal(page.headers.get('location'), '/signup?utm=x', `${what}: the form post is sent back`);
      assert.ok(flashOf(page.headers.getSetCookie(), 'notify_errors')?.length, `${what}: notify_errors flash`);
    }
    assert.equal(await countContacts(notify()), before, 'nothing stored');
  });

  test('open redirect attempts never produce an offsite Location', async () => {
    for (const [redirect, referer] of [
      ['//evil.com', 'https://evil.com/phish'],
      ['https://evil.com', 'http://localhost:3000//evil.com'],
      ['/\\evil.com', ''],
      ['/.//evil.com', 'javascript:alert(1)'],
    ]) {
      for (const email of ['or@example.com', 'not-valid']) {
        const res = await capture(notify(), form({ email, redirect }), referer ? { referer } : {});
        const location = res.headers.get('location') ?? '';
        assert.equal(location, '/', `${redirect} / ${referer}: ${location}`);
        assert.doesNotMatch(await res.text(), /evil/);
      }
    }
  });

  test('honeypot: a filled notify_hp gets the normal success answer in both shapes and nothing is saved', async () => {
    const before = await countContacts(notify());
    const page = await capture(notify(), form({ email: 'bot@example.com', notify_hp: 'http://spam.example' }), REFERER);
    assert.equal(page.status, 303);
    assert.deepEqual(flashOf(page.headers.getSetCookie(), 'notify_success'), ['Thanks for subscribing!']);
    const ajax = await capture(notify(), form({ email: 'bot2@example.com', notify_hp: 'x' }), AJAX);
    assert.deepEqual(await ajax.json(), { ok: true, message: 'Thanks for subscribing!' });
    assert.equal(await notify().contacts.get('bot@example.com'), undefined);
    assert.equal(await countContacts(notify()), before);
  });

  test('a capture post never lifts a suppression, and never overwrites what is stored', async () => {
    for (const status of ['unsubscribed', 'bounced', 'complained'] as const) {
      await notify().contacts.upsert({ email: `${status}@example.com`, name: 'Kept', attributes: { plan: 'gold' }, status });
      const res = await capture(notify(), form({ email: `${status}@example.com`, name: 'Other', plan: 'free' }), AJAX);
      assert.deepEqual(await res.json(), { ok: true, message: 'Thanks for subscribing!' }, 'same answer: no status leak');
      const c = await notify().contacts.get(`${status}@example.com`);
      assert.equal(c?.status, status);
      assert.equal(c?.name, 'Kept');
      assert.deepEqual(c?.attributes, { plan: 'gold' });
    }
    await notify().contacts.upsert({ email: 'known@example.com', attributes: { plan: 'gold' } });
    await capture(notify(), form({ email: 'KNOWN@example.com', name: 'New', plan: 'free', city: 'Oslo', list: 'extra' }), AJAX);
    const known = await notify().contacts.get('known@example.com');
    assert.equal(known?.name, 'New', 'an empty name is filled');
    assert.deepEqual(known?.attributes, { plan: 'gold', city: 'Oslo' }, 'stored attributes are kept, missing ones filled');
    assert.deepEqual(known?.lists, ['extra']);
  });
});

forEachEngine('capture with trackIpAddress and honeypot off', (h) => {
  const notify = useNotify(h, { captureRateLimit: 0, trackIpAddress: true, honeypot: false, trustProxy: true });

  test('consent IP is stored only when trackIpAddress is true; honeypot off ignores notify_hp', async () => {
    const res = await capture(notify(), form({ email: 'ip@example.com', notify_hp: 'filled' }), { ...AJAX, 'x-forwarded-for': '198.51.100.7' });
    assert.equal(res.status, 200);
    const c = await notify().contacts.get('ip@example.com');
    assert.ok(c, 'saved: the server-side honeypot check is off with honeypot false');
    assert.deepEqual(c.attributes, {});
    const row = await notify().context.store.db.selectFrom('notify_contacts').select('consent_ip').where('id', '=', c.id).executeTakeFirstOrThrow();
    assert.equal(row.consent_ip, '198.51.100.7');
  });
});
