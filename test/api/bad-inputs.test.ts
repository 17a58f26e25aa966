// Bad inputs on every API route: a missing or wrong token (and the rate limit on failed
// attempts), wrong types, unknown ids, oversized bodies, wrong media types. Each is a problem
// document with notify's error code, listed in the OpenAPI document, and nothing is stored.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { manualClock } from '../../src/core/clock.ts';
import { API_DOCUMENT, API_ROUTES } from '../../src/http/api/index.ts';
import { MAX_CSV_BYTES } from '../../src/http/api/imports.ts';
import type { ApiRoute, JsonSchema } from '../../src/http/api/route.ts';
import { MAX_JSON_BYTES } from '../../src/http/api/router.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { apiClient, DocumentChecker, TOKEN } from './helpers.ts';

const doc = API_DOCUMENT as unknown as ConstructorParameters<typeof DocumentChecker>[0];
const guarded = API_ROUTES.filter((r) => r.auth !== false);
const SAMPLE: Record<string, string> = { contact: 'ann@example.com', id: '1', name: 'news', sequence: 'welcome' };
const pathOf = (r: ApiRoute, values: Record<string, string> = SAMPLE) => r.path.replace(/\{([a-z]+)\}/g, (_, k: string) => encodeURIComponent(values[k]));
/** a body each route would accept, so only the thing under test is wrong */
const GOOD_BODY: Record<string, unknown> = {
  createContact: { email: 'new@example.com' },
  updateContact: { name: 'New' },
  subscribeContact: { list: 'news' },
  unsubscribeContact: { list: 'news' },
  createList: { name: 'other' },
  createCampaign: { subject: 'Hi', html: '<p>Hi</p>' },
  updateCampaign: { subject: 'Changed' },
  scheduleCampaign: { send_at: '2099-01-01T09:00:00Z' },
  sendTestCampaign: { to: ['proof@example.com'] },
  createSequence: { name: 'other', steps: [{ delayMinutes: 0, subject: 'Hi', html: 'x' }] },
  enrollContact: { contact: 'ann@example.com' },
  startImport: 'email\nnew@example.com\n',
};
const jsonRoutes = guarded.filter((r) => r.body && (r.body.contentType ?? 'application/json') === 'application/json');

forEachEngine('API bad inputs', (h) => {
  const clock = manualClock(Date.UTC(2026, 0, 1, 9));
  const notify = useNotify(h, { adminToken: TOKEN, trustProxy: true, clock });
  const checker = new DocumentChecker(doc);
  let ip = 0;
  // a fresh client address per call, so the failed-auth limit is only met where a test means it
  const api = (method: string, path: string, opts: Parameters<ReturnType<typeof apiClient>>[2] = {}) => apiClient(notify, checker)(method, path, { ip: `198.51.100.${ip++ % 250}`, ...opts });
  const stored = async () => ({ contacts: await notify().contacts.count(), lists: (await notify().lists.list()).length, campaigns: (await notify().context.store.stats.listCampaigns(100)).length });

  test('setup: a list, a contact, a sequence', async () => {
    await api('POST', '/lists', { body: { name: 'news' } });
    await api('POST', '/contacts', { body: { email: 'ann@example.com', lists: ['news'] } });
    await api('POST', '/sequences', { body: { name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Hi', html: 'x' }] } });
  });

  test('every route without a token, with a wrong one, with Basic auth or a token in the query: 401 problem, nothing done', async () => {
    const before = await stored();
    const wrong = [{ token: null }, { token: 'wrong' }, { token: `${TOKEN}x` }, { token: null, headers: { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` } }, { token: null, headers: { authorization: TOKEN } }];
    for (const route of guarded) {
      for (const w of wrong) {
        const body = GOOD_BODY[route.operationId];
        const headers = { ...(route.body?.contentType === 'text/csv' ? { 'content-type': 'text/csv' } : {}), ...w.headers };
        const res = await api(route.method.toUpperCase(), `${pathOf(route)}${route.method === 'get' ? `?token=${TOKEN}` : ''}`, { token: w.token, body, headers });
        assert.equal(res.status, 401, `${route.method} ${route.path} ${JSON.stringify(w)}`);
        assert.equal(res.body.code, 'UNAUTHORIZED');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="notify"/);
      }
    }
    assert.deepEqual(await stored(), before);
  });

  test('failed attempts are limited per client network: the 11th in a minute is 429, then even the right token waits', async () => {
    const me = '203.0.113.7';
    for (let i = 0; i < 10; i++) assert.equal((await api('GET', '/lists', { token: 'guess', ip: me })).status, 401);
    const limited = await api('GET', '/lists', { token: 'guess', ip: me });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    const wait = Number(limited.headers.get('retry-after'));
    assert.ok(wait >= 1 && wait <= 60, String(wait));
    assert.equal((await api('GET', '/lists', { ip: me })).status, 429, 'the right token too');
    assert.equal((await api('GET', '/lists', { ip: '203.0.113.8' })).status, 200, 'another network is not affected');
    assert.equal((await api('GET', '/lists', { ip: '2001:db8:1:2::9' })).status, 200);
    clock.advance(wait * 1000);
    assert.equal((await api('GET', '/lists', { ip: me })).status, 200, 'after Retry-After the right token works');
  });

  test('wrong types in every field of every JSON body: 422 INVALID_INPUT naming the field, nothing stored', async () => {
    const ajv = new Ajv2020({ strict: false });
    const before = await stored();
    for (const route of jsonRoutes) {
      const schema = route.body!.schema as { properties: Record<string, JsonSchema> };
      for (const [field, fieldSchema] of Object.entries(schema.properties)) {
        const check = ajv.compile(fieldSchema);
        const wrong = [42, 'text', true, [], {}].find((v) => !check(v));
        assert.notEqual(wrong, undefined, `${route.operationId}.${field} accepts anything`);
        const body = { ...(GOOD_BODY[route.operationId] as object), [field]: wrong };
        const res = await api(route.method.toUpperCase(), pathOf(route), { body });
        assert.equal(res.status, 422, `${route.operationId}.${field} = ${JSON.stringify(wrong)}: ${res.text}`);
        assert.equal(res.body.code, 'INVALID_INPUT');
        assert.equal(res.body.field, field, res.text);
      }
      for (const body of ['{"email":', '[]', 'null', '"x"', JSON.stringify({ ...(GOOD_BODY[route.operationId] as object), unknownField: 1 })]) {
        const res = await api(route.method.toUpperCase(), pathOf(route), { body });
        assert.equal(res.status, 422, `${route.operationId} ${body}`);
        assert.equal(res.body.code, 'INVALID_INPUT');
      }
    }
    assert.equal((await api('POST', '/contacts', { body: {} })).body.field, 'email', 'a missing required field is named');
    assert.equal((await api('POST', '/contacts', { body: { email: 'not an address' } })).body.code, 'INVALID_EMAIL');
    assert.equal((await api('PATCH', '/contacts/ann@example.com', { body: {} })).status, 422, 'an empty update');
    assert.deepEqual(await stored(), before);
  });

  test('wrong query and path values: 422 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['/contacts?limit=abc', 'limit'],
      ['/contacts?limit=0', 'limit'],
      ['/contacts?limit=1001', 'limit'],
      ['/contacts?status=gone', 'status'],
      ['/contacts?after=garbage', 'after'],
      ['/contacts?segment=%7Bbad', 'segment'],
      [`/contacts?segment=${encodeURIComponent('{"nope":1}')}`, 'segment'],
      [`/contacts?search=${'x'.repeat(201)}`, 'search'],
      ['/contacts/export.csv?status=gone', 'status'],
      ['/campaigns?limit=-1', 'limit'],
      ['/campaigns?status=gone', 'status'],
      ['/campaigns/abc/audience', 'id'],
      ['/campaigns/abc', 'id'],
      ['/campaigns/0/stats', 'campaignId'],
      ['/campaigns/1/report?bucket=2h', 'bucket'],
      ['/enrollments/x1', 'id'],
      ['/sequences/welcome/enrollments?limit=0', 'limit'],
      ['/sequences/welcome/enrollments?status=gone', 'status'],
      ['/sequences/welcome/enrollments?after=garbage', 'after'],
    ];
    for (const [path, field] of cases) {
      const res = await api('GET', path);
      assert.equal(res.status, 422, `${path}: ${res.text}`);
      assert.equal(res.body.code, 'INVALID_INPUT', path);
      assert.match(res.body.field ?? '', new RegExp(`^${field}`), `${path}: ${res.text}`);
    }
  });

  test('unknown ids and names: 404 NOT_FOUND, nothing created', async () => {
    const before = await stored();
    const cases: [string, string, unknown?][] = [
      ['GET', '/contacts/999'],
      ['GET', '/contacts/nobody@example.com'],
      ['PATCH', '/contacts/999', { name: 'X' }],
      ['DELETE', '/contacts/nobody@example.com'],
      ['POST', '/contacts/999/subscribe', { list: 'news' }],
      ['POST', '/contacts/ann@example.com/subscribe', { list: 'nope' }],
      ['POST', '/contacts/999/unsubscribe', {}],
      ['GET', '/contacts/999/export'],
      ['GET', '/contacts?list=nope'],
      ['GET', '/contacts/count?list=nope'],
      ['GET', '/contacts/export.csv?list=nope'],
      ['DELETE', '/lists/nope'],
      ['GET', '/lists/nope'],
      ['POST', '/campaigns', { subject: 'Hi', html: 'x', list: 'nope' }],
      ['GET', '/campaigns/999'],
      ['GET', '/campaigns/999/stats'],
      ['GET', '/campaigns/999/report'],
      ['PATCH', '/campaigns/999', { subject: 'X' }],
      ['DELETE', '/campaigns/999'],
      ['POST', '/campaigns/999/schedule', { send_at: '2099-01-01T09:00:00Z' }],
      ['POST', '/campaigns/999/pause'],
      ['POST', '/campaigns/999/resume'],
      ['POST', '/campaigns/999/cancel'],
      ['POST', '/campaigns/999/test', { to: ['proof@example.com'] }],
      ['GET', '/campaigns/999/audience'],
      ['GET', '/sequences/999'],
      ['GET', '/sequences/nope'],
      ['POST', '/sequences/nope/enrollments', { contact: 'ann@example.com' }],
      ['POST', '/sequences/welcome/enrollments', { contact: 999 }],
      ['GET', '/enrollments/999'],
      ['GET', '/sequences/nope/enrollments'],
      ['GET', '/imports/nope'],
    ];
    for (const [method, path, body] of cases) {
      const res = await api(method, path, { body });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.code, 'NOT_FOUND', path);
      assert.equal(res.headers.get('content-type'), 'application/problem+json');
    }
    assert.deepEqual(await stored(), before);
  });

  test('conflicts: an existing address, a taken list name, a second enrollment, a suppressed contact: 409', async () => {
    assert.equal((await api('POST', '/contacts', { body: { email: 'ANN@example.com' } })).body.code, 'DUPLICATE');
    assert.equal((await api('POST', '/lists', { body: { name: 'NEWS' } })).body.code, 'DUPLICATE');
    assert.equal((await api('POST', '/sequences/welcome/enrollments', { body: { contact: 'ann@example.com' } })).status, 201);
    assert.equal((await api('POST', '/sequences/welcome/enrollments', { body: { contact: 'ann@example.com' } })).body.code, 'DUPLICATE');
    await api('POST', '/contacts', { body: { email: 'gone@example.com', status: 'unsubscribed' } });
    const suppressed = await api('POST', '/sequences/welcome/enrollments', { body: { contact: 'gone@example.com' } });
    assert.deepEqual([suppressed.status, suppressed.body.code], [409, 'SUPPRESSED']);
  });

  test('lifecycle: pause a draft is 409 naming its status; an unparseable or past send_at is 422; nothing changes', async () => {
    const draft = await api('POST', '/campaigns', { body: { subject: 'Hi', html: '<p>Hi</p>', list: 'news' } });
    const id = draft.body.id;
    for (const action of ['pause', 'resume']) {
      const res = await api('POST', `/campaigns/${id}/${action}`);
      assert.deepEqual([res.status, res.body.code], [409, 'INVALID_STATE'], res.text);
      assert.match(res.body.detail, /draft/, res.text);
    }
    for (const sendAt of ['next tuesday', '2026-13-40T25:00:00Z', '', '2025-12-31T09:00:00Z', '2026-01-01T08:59:00Z']) {
      const res = await api('POST', `/campaigns/${id}/schedule`, { body: { send_at: sendAt } });
      assert.deepEqual([res.status, res.body.code], [422, 'INVALID_INPUT'], `${sendAt}: ${res.text}`);
    }
    const test = await api('POST', `/campaigns/${id}/test`, { body: { to: ['not an address'] } });
    assert.equal(test.status, 422, test.text);
    assert.equal((await api('POST', `/campaigns/${id}/test`, { body: { to: [] } })).status, 422, 'no recipient');
    assert.deepEqual((await api('GET', `/campaigns/${id}`)).body, draft.body, 'still the same draft');
    assert.equal((await api('POST', `/campaigns/${id}/cancel`)).body.status, 'cancelled');
    const gone = await api('DELETE', `/campaigns/${id}`);
    assert.deepEqual([gone.status, gone.body.code], [409, 'INVALID_STATE'], 'only a draft is deleted');
    assert.match(gone.body.detail, /cancelled/);
    const late = await api('PATCH', `/campaigns/${id}`, { body: { subject: 'Too late' } });
    assert.deepEqual([late.status, late.body.code], [409, 'INVALID_STATE']);
    assert.equal((await notify().campaigns.get(id))?.subject, 'Hi');
  });

  test('oversized bodies: 413 BODY_TOO_LARGE on every route that reads one, declared or streamed', async () => {
    const before = await stored();
    for (const route of guarded.filter((r) => r.body)) {
      const max = route.body!.maxBytes ?? MAX_JSON_BYTES;
      const type = route.body!.contentType ?? 'application/json';
      const declared = await api(route.method.toUpperCase(), pathOf(route), { body: `"${'x'.repeat(Math.min(max, MAX_JSON_BYTES) + 1)}"`, headers: { 'content-type': type, ...(max > MAX_JSON_BYTES ? { 'content-length': String(max + 1) } : {}) } });
      assert.equal(declared.status, 413, `${route.operationId}: ${declared.text.slice(0, 200)}`);
      assert.equal(declared.body.code, 'BODY_TOO_LARGE');
      // no Content-Length: the stream is cut as soon as it passes the cap
      const chunk = new Uint8Array(256 * 1024).fill(120);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          sent += chunk.length;
          controller.enqueue(chunk);
          if (sent > max + chunk.length * 4) controller.close();
        },
      });
      const res = await notify().fetch(new Request(`http://localhost:3000/notify/api/v1${pathOf(route)}`, { method: route.method.toUpperCase(), headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type }, body: stream, duplex: 'half' } as RequestInit));
      assert.equal(res.status, 413, route.operationId);
      assert.ok(sent <= max + chunk.length * 3, `read ${sent} bytes of a ${max}-byte cap`);
    }
    assert.equal(MAX_CSV_BYTES, 50 * 1024 * 1024);
    assert.deepEqual(await stored(), before);
  });

  test('a body of another media type: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const route of guarded.filter((r) => r.body)) {
      const type = (route.body!.contentType ?? 'application/json') === 'text/csv' ? 'application/json' : 'text/plain';
      const res = await api(route.method.toUpperCase(), pathOf(route), { body: JSON.stringify(GOOD_BODY[route.operationId]), headers: { 'content-type': type } });
      assert.equal(res.status, 415, route.operationId);
      assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const form = await api('POST', '/contacts', { body: 'email=x%40example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415, 'a cross-site form post never reaches the handler');
  });

  test('imports: an empty file, no email column, bytes that are not UTF-8, an unknown status or encoding: 422 and no job', async () => {
    const before = await stored();
    const latin1 = Buffer.from('email,name\nzoe@example.com,Zo\xeb\n', 'latin1');
    for (const [query, body, field] of [
      ['', '', undefined],
      ['', 'name,phone\nAnn,1\n', undefined],
      ['', latin1, undefined],
      ['?status=gone', 'email\nx@example.com\n', 'status'],
      ['?encoding=utf-16', 'email\nx@example.com\n', 'encoding'],
    ] as [string, string | Buffer, string | undefined][]) {
      const res = await api('POST', `/imports${query}`, { body: new Uint8Array(body instanceof Buffer ? body : Buffer.from(body)), headers: { 'content-type': 'text/csv' } });
      assert.equal(res.status, 422, `${query} ${body.toString().slice(0, 20)}: ${res.text}`);
      assert.equal(res.body.code, 'INVALID_INPUT');
      if (field) assert.equal(res.body.field, field);
      if (body instanceof Buffer) assert.match(res.body.detail, /not UTF-8 text \(line 2\).*\?encoding=latin1/);
    }
    assert.equal(await notify().contacts.get('x@example.com'), undefined, 'no row of a refused file was stored');
    const noFile = new FormData();
    noFile.set('other', 'email\nx@example.com\n');
    const missing = await api('POST', '/imports', { body: noFile });
    assert.deepEqual([missing.status, missing.body.code, missing.body.field], [422, 'INVALID_INPUT', 'file']);
    const broken = await api('POST', '/imports', { body: '--x\r\nnonsense', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    assert.deepEqual([broken.status, broken.body.code], [422, 'INVALID_INPUT']);
    const ok = await api('POST', '/imports?encoding=latin1', { body: new Uint8Array(latin1), headers: { 'content-type': 'text/csv' } });
    assert.equal(ok.status, 202, 'the same bytes as latin1 are accepted');
    assert.deepEqual({ ...(await stored()), contacts: before.contacts }, before);
  });

  test('HTML in text fields comes back as the same text in JSON, never as markup', async () => {
    const html = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    const created = await api('POST', '/contacts', { body: { email: 'html@example.com', name: html, attributes: { note: html } } });
    assert.deepEqual([created.body.name, created.body.attributes.note], [html, html]);
    assert.equal(created.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(created.headers.get('x-content-type-options'), 'nosniff');
    const list = await api('POST', '/lists', { body: { name: 'html list', description: html } });
    assert.equal(list.body.description, html);
    const problem = await api('GET', `/contacts/${encodeURIComponent(`${html}@example.com`)}`);
    assert.equal(problem.headers.get('content-type'), 'application/problem+json');
  });

  test('an unknown path is a 404 problem, a known path with another method a 405 with Allow, both behind the token', async () => {
    const auth = { headers: { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '192.0.2.1' } };
    const unknown = await call(notify(), '/notify/api/v1/nothing', auth);
    assert.deepEqual([unknown.status, unknown.headers.get('content-type'), ((await unknown.json()) as { code: string }).code], [404, 'application/problem+json', 'NOT_FOUND']);
    const put = await call(notify(), '/notify/api/v1/contacts/1', { ...auth, method: 'PUT' });
    assert.deepEqual([put.status, put.headers.get('allow')], [405, 'GET, PATCH, DELETE']);
    assert.equal((await call(notify(), '/notify/api/v1/nothing', { headers: { 'x-forwarded-for': '192.0.2.2' } })).status, 401);
  });
});

describe('the API is off without adminToken', () => {
  let notify: Notify;
  const dir = mkdtempSync(join(tmpdir(), 'notify-api-off-'));
  after(() => notify?.close());
  test('every API path is a plain 404, the document included', async () => {
    notify = await createNotify(testOptions(`sqlite:${join(dir, 'n.db')}`));
    for (const path of ['/notify/api/v1/openapi.json', '/notify/api/v1/contacts', '/notify/api/v1/lists']) {
      const res = await call(notify, path, { headers: { authorization: 'Bearer anything' } });
      assert.equal(res.status, 404, path);
      assert.notEqual(res.headers.get('content-type'), 'application/problem+json');
    }
  });
});

describe('the API of a closed instance', () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-api-closed-'));
  test('answers 503 CLOSED as a problem, never a stack trace', async () => {
    const notify = await createNotify(testOptions(`sqlite:${join(dir, 'n.db')}`, { adminToken: TOKEN }));
    await notify.close();
    const res = await call(notify, '/notify/api/v1/contacts', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    assert.equal(((await res.json()) as { code: string }).code, 'CLOSED');
  });
});

describe('an import running when the instance closes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-api-import-close-'));
  test('stops after its current batch; the job says so, and what it stored stays', async () => {
    const notify = await createNotify(testOptions(`sqlite:${join(dir, 'n.db')}`, { adminToken: TOKEN }));
    const rows = Array.from({ length: 3000 }, (_, i) => `p${i}@example.com`);
    const started = await call(notify, '/notify/api/v1/imports', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' }, body: `email\n${rows.join('\n')}\n` });
    assert.equal(started.status, 202);
    const { id } = (await started.json()) as { id: string };
    await notify.close();
    const job = (await (await call(notify, `/notify/api/v1/imports/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { status: string; error: string; created: number; rows: number };
    assert.equal(job.status, 'failed');
    assert.match(job.error, /stopped during the import; run it again/);
    assert.ok(job.rows < rows.length, `${job.rows} rows`);
    const again = await createNotify(testOptions(`sqlite:${join(dir, 'n.db')}`));
    assert.equal(await again.contacts.count(), job.created, 'the rows it reported are stored');
    await again.close();
  });
});
