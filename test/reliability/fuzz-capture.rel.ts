import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { CAPTURE_LIMITS, parseCaptureFields } from '../../src/core/capture-fields.ts';
import { isValidEmail } from '../../src/core/email.ts';
import { isNotifyError } from '../../src/errors.ts';
import type { Notify } from '../../src/notify.ts';
import { createNotify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { AJAX, capture } from '../capture/helpers.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { assertSafeResponse, fuzzParams, hostileOrHuge, hostileString } from './helpers/fuzz.ts';

/**
 * The capture parser and POST /notify/capture under fuzzing: any field set is either a contact
 * input that obeys the limits or a coded error naming a field; any body (urlencoded, JSON,
 * multipart, junk) gets a non-5xx answer that echoes no markup and redirects only on-site, and
 * whatever is stored is a valid, normalised address.
 */

const fieldName = fc.oneof(fc.constantFrom('email', 'name', 'list', 'list[]', 'redirect', 'notify_hp', 'company', 'interests[]', '__proto__', 'constructor', 'prototype', '_csrf', 'a.b-c', ''), hostileString(70));
const fieldValue = fc.oneof(fc.constantFrom('a@example.com', 'Ann@Example.COM ', 'x@y', 'news', '/thanks', '//evil.com', 'https://evil.com', '/\\evil.com', ''), hostileOrHuge());
const fieldMap = fc.array(fc.tuple(fieldName, fc.array(fieldValue, { minLength: 1, maxLength: 3 })), { maxLength: 12 }).map((entries) => {
  const m = new Map<string, string[]>();
  for (const [k, vs] of entries) m.set(k, [...(m.get(k) ?? []), ...vs]);
  return m;
});

describe('capture field parser under fuzzing', () => {
  test('parseCaptureFields returns valid input within the limits or throws a coded NotifyError; it never pollutes prototypes', () => {
    fc.assert(
      fc.property(fieldMap, (fields) => {
        let out: ReturnType<typeof parseCaptureFields>;
        try {
          out = parseCaptureFields(fields);
        } catch (err) {
          assert.ok(isNotifyError(err, 'INVALID_INPUT') || isNotifyError(err, 'INVALID_EMAIL'), `coded error, got ${err}`);
          assert.equal(typeof (err as { details?: { field?: unknown } }).details?.field, 'string', 'the error names a field');
          return;
        }
        assert.ok(isValidEmail(out.email), `valid email ${out.email}`);
        assert.ok(out.lists.length <= CAPTURE_LIMITS.lists);
        assert.ok(out.name === undefined || (out.name.length <= CAPTURE_LIMITS.name && !/[\r\n]/.test(out.name)));
        assert.equal(Object.getPrototypeOf(out.attributes), Object.prototype);
        for (const [k, v] of Object.entries(out.attributes)) {
          assert.ok(!['__proto__', 'constructor', 'prototype', 'email', 'name', 'list', 'redirect', 'notify_hp'].includes(k), `attribute ${k} is not a reserved name`);
          for (const one of Array.isArray(v) ? v : [v]) assert.ok(one.length <= CAPTURE_LIMITS.value);
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }),
      fuzzParams(2000),
    );
  });
});

describe('POST /notify/capture under fuzzing', () => {
  let notify: Notify;
  let url: string;
  let cleanup: () => void;
  before(async () => {
    const db = freshDatabaseUrl('sqlite');
    url = db.url;
    cleanup = db.cleanup;
    notify = await createNotify(testOptions(db.url, { captureRateLimit: 0, baseUrl: 'http://notify.test' }));
  });
  after(async () => {
    await notify.close();
    cleanup();
  });

  const urlencoded = fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 10 }).map((pairs) => ({ body: new URLSearchParams(pairs).toString(), headers: {} as Record<string, string> }));
  const json = fc.dictionary(fieldName, fc.oneof(fieldValue, fc.array(fieldValue, { maxLength: 3 }), fc.integer(), fc.constant(null), fc.object({ maxDepth: 2 }))).map((o) => ({ body: JSON.stringify(o), headers: { 'content-type': 'application/json', ...AJAX } }));
  const multipart = fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 8 }).map((pairs) => {
    const fd = new FormData();
    for (const [k, v] of pairs) fd.append(k, v);
    return { body: fd, headers: {} as Record<string, string> };
  });
  const junk = fc.tuple(hostileOrHuge(), fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'multipart/form-data', 'text/plain', 'application/xml', '')).map(([body, type]) => ({ body, headers: type ? { 'content-type': type } : ({} as Record<string, string>) }));
  const post = fc.tuple(fc.oneof(urlencoded, json, multipart, junk), fc.boolean(), fc.option(fc.constantFrom('https://site.example/signup', 'https://evil.example/', 'javascript:alert(1)', '\r\nx'), { nil: undefined }));

  test('any body in any shape: no 5xx, no markup echoed, only relative redirects, stored emails valid and normalised', async (t) => {
    await fc.assert(
      fc.asyncProperty(post, async ([{ body, headers }, ajax, referer]) => {
        const h: Record<string, string> = { ...headers, ...(ajax ? AJAX : {}) };
        if (referer && !/[\r\n]/.test(referer)) h.referer = referer;
        const res = await capture(notify, body, h);
        await assertSafeResponse(res, 'capture');
        const location = res.headers.get('location');
        if (location !== null) {
          // a form error answers its 4xx with Location + Refresh back to the form (README, Form capture)
          assert.ok(res.status >= 300 && res.status < 500, `Location on a redirect or a form error, not on ${res.status}`);
          const target = new URL(location, 'http://notify.test/');
          assert.ok(target.origin === 'http://notify.test' || location === referer, `redirect stays on-site or goes back to the Referer: ${location}`);
          assert.ok(!/^javascript:/i.test(location));
          const refresh = res.headers.get('refresh');
          if (refresh !== null) assert.equal(refresh, `0; url=${location}`, 'Refresh goes where Location goes');
        }
      }),
      fuzzParams(500),
    );
    // and one known-good post in each shape, so the check below never runs on an empty table
    for (const [body, headers] of [
      [new URLSearchParams({ email: '  Form.Case@Example.COM ', name: 'Form' }).toString(), {}],
      [JSON.stringify({ email: ' json.case@example.org', name: 'Json' }), { 'content-type': 'application/json', ...AJAX }],
    ] as const) {
      const res = await capture(notify, body, headers);
      assert.ok(res.status < 400, `a valid post is accepted (${res.status})`);
      await res.arrayBuffer();
    }
    const store = createStore(url);
    try {
      const rows = await store.db.selectFrom('notify_contacts').select('email').execute();
      assert.ok(rows.some((r) => r.email === 'Form.Case@Example.COM') && rows.some((r) => r.email === 'json.case@example.org'), 'the known-good posts are stored, trimmed');
      t.diagnostic(`${rows.length - 2} contacts stored by the fuzzed posts, plus the two known-good ones`);
      for (const { email } of rows) {
        assert.ok(isValidEmail(email), `stored ${email} is valid`);
        assert.equal(email, email.trim(), `stored ${email} is trimmed`);
      }
    } finally {
      await store.close();
    }
  });
});
