// The API against its own OpenAPI document: the document passes a third-party OpenAPI 3.1
// validator, every mounted route is in it, and every operation is called here with every answer
// checked against the document (status listed, media type, body valid against the schema).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { API_DOCUMENT } from '../../src/http/api/index.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { waitUntil } from '../reliability/helpers/processes.ts';
import { apiClient, DocumentChecker, missingFromDocument, mountedRoutes, TOKEN } from './helpers.ts';

type Doc = ConstructorParameters<typeof DocumentChecker>[0];
const doc = API_DOCUMENT as unknown as Doc;

test('the document is valid OpenAPI 3.1 for @seriousme/openapi-schema-validator', async () => {
  const validator = new Validator();
  const res = await validator.validate(structuredClone(API_DOCUMENT));
  assert.equal(res.valid, true, JSON.stringify(res.errors, null, 2));
  assert.equal(validator.version, '3.1');
});

test('the checker fails an answer the document does not describe', () => {
  const checker = new DocumentChecker(doc);
  const contact = { id: 1, email: 'a@example.com', name: null, status: 'subscribed', unsubscribe_token: 't', attributes: {}, lists: [], consent_at: null, consent_source: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
  const json = 'application/json; charset=utf-8';
  assert.equal(checker.explain('GET', '/notify/api/v1/contacts/1', 200, json, JSON.stringify(contact)), undefined);
  assert.match(checker.explain('GET', '/notify/api/v1/contacts/1', 200, json, JSON.stringify({ ...contact, secret: 1 })) ?? '', /additional properties/);
  assert.match(checker.explain('GET', '/notify/api/v1/contacts/1', 200, json, JSON.stringify({ ...contact, id: '1' })) ?? '', /must be integer/);
  assert.match(checker.explain('GET', '/notify/api/v1/contacts/1', 200, json, JSON.stringify({ ...contact, created_at: 'yesterday' })) ?? '', /date-time/);
  assert.match(checker.explain('GET', '/notify/api/v1/contacts/1', 200, 'text/html', '<p>') ?? '', /text\/html/);
  assert.match(checker.explain('GET', '/notify/api/v1/contacts/1', 418, json, '{}') ?? '', /does not list/);
  assert.match(checker.explain('GET', '/notify/api/v1/nothing', 200, json, '{}') ?? '', /not in the document/);
});

forEachEngine('the API answers every operation as its document says', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN });
  const checker = new DocumentChecker(doc);
  const api = apiClient(notify, checker);

  test('every route the router mounts is in the document, and a route left out would be found', () => {
    const routes = mountedRoutes(notify());
    assert.ok(routes.length >= 20, `${routes.length} routes`);
    assert.deepEqual(missingFromDocument(routes, doc), []);
    const { patch: _, ...others } = doc.paths['/contacts/{contact}'];
    const without = { ...doc, paths: { ...doc.paths, '/contacts/{contact}': others } };
    assert.deepEqual(missingFromDocument(routes, without), ['PATCH /notify/api/v1/contacts/:contact']);
  });

  test('openapi.json is served without a token', async () => {
    const res = await api('GET', '/openapi.json', { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, JSON.parse(JSON.stringify(API_DOCUMENT)));
  });

  test('lists: create, list, delete', async () => {
    const created = await api('POST', '/lists', { body: { name: 'news', description: '<b>Weekly</b>', public: true } });
    assert.equal(created.status, 201);
    assert.deepEqual({ ...created.body, id: 0, created_at: 0 }, { id: 0, name: 'news', description: '<b>Weekly</b>', public: true, subscribers: 0, created_at: 0 });
    assert.equal((await api('POST', '/lists', { body: { name: 'temp' } })).status, 201);
    assert.deepEqual((await api('GET', '/lists/NEWS')).body, created.body, 'any case');
    assert.equal((await api('DELETE', '/lists/TEMP')).status, 204, 'any case');
    assert.deepEqual((await api('GET', '/lists')).body.lists.map((l: { name: string }) => l.name), ['news']);
  });

  test('contacts: create, get by id and address, page with a cursor, search, filter, count, update', async () => {
    const ann = await api('POST', '/contacts', { body: { email: 'Ann@Example.com', name: 'Ann', lists: ['news'], attributes: { plan: 'pro' } } });
    assert.equal(ann.status, 201);
    assert.equal(ann.headers.get('location'), `/notify/api/v1/contacts/${ann.body.id}`);
    assert.deepEqual([ann.body.email, ann.body.status, ann.body.lists], ['Ann@Example.com', 'subscribed', ['news']]);
    const bob = await api('POST', '/contacts', { body: { email: 'bob@example.com' } });
    assert.deepEqual((await api('GET', `/contacts/${ann.body.id}`)).body, ann.body);
    assert.deepEqual((await api('GET', '/contacts/ann%40example.com')).body, ann.body);

    const first = await api('GET', '/contacts?limit=1');
    assert.deepEqual(first.body.contacts.map((c: { email: string }) => c.email), ['Ann@Example.com']);
    assert.ok(first.body.next);
    const second = await api('GET', `/contacts?limit=1&after=${first.body.next}`);
    assert.deepEqual([second.body.contacts.map((c: { email: string }) => c.email), second.body.next], [['bob@example.com'], null]);
    assert.deepEqual((await api('GET', '/contacts?search=BOB')).body.contacts.map((c: { id: number }) => c.id), [bob.body.id]);
    assert.deepEqual((await api('GET', '/contacts?list=news')).body.contacts.map((c: { id: number }) => c.id), [ann.body.id]);
    const segment = encodeURIComponent(JSON.stringify({ attr: 'plan', eq: 'pro' }));
    assert.deepEqual((await api('GET', `/contacts?segment=${segment}`)).body.contacts.map((c: { id: number }) => c.id), [ann.body.id]);
    assert.deepEqual((await api('GET', `/contacts/count?list=news&segment=${segment}`)).body, { count: 1 });

    const patched = await api('PATCH', '/contacts/bob@example.com', { body: { name: 'Bob B', attributes: { plan: 'free' } } });
    assert.deepEqual([patched.body.name, patched.body.attributes], ['Bob B', { plan: 'free' }]);
    assert.equal((await notify().contacts.get('bob@example.com'))?.name, 'Bob B', 'stored');
  });

  test('contacts: subscribe and unsubscribe from a list, unsubscribe from everything, export, CSV, erase', async () => {
    assert.deepEqual((await api('POST', '/contacts/bob@example.com/subscribe', { body: { list: 'news' } })).body.lists, ['news']);
    assert.deepEqual((await api('GET', '/contacts/count?list=news')).body, { count: 2 });
    const left = await api('POST', '/contacts/bob@example.com/unsubscribe', { body: { list: 'news' } });
    assert.deepEqual([left.body.lists, left.body.status], [[], 'subscribed']);
    // no body at all: from everything, as the unsubscribe link does
    const out = await api('POST', '/contacts/bob@example.com/unsubscribe');
    assert.equal(out.body.status, 'unsubscribed');

    const person = await api('GET', '/contacts/ann@example.com/export');
    assert.deepEqual([person.body.contact.email, person.body.lists.map((l: { name: string }) => l.name)], ['Ann@Example.com', ['news']]);
    const csv = await api('GET', '/contacts/export.csv?list=news');
    assert.match(csv.headers.get('content-disposition') ?? '', /attachment/);
    assert.deepEqual(csv.text.trim().split('\r\n').map((l) => l.split(',')[0]), ['email', 'Ann@Example.com']);

    const temp = await api('POST', '/contacts', { body: { email: 'temp@example.com' } });
    assert.equal((await api('DELETE', `/contacts/${temp.body.id}`)).status, 204);
    assert.equal(await notify().contacts.get('temp@example.com'), undefined);
  });

  let campaignId = 0;
  test('campaigns: create, get, send a batch, list, stats and report', async () => {
    const created = await api('POST', '/campaigns', { body: { subject: 'Hello {{ contact.name }}', html: '<p><a href="https://example.org/x">Read</a></p>', list: 'news', name: 'November' } });
    assert.equal(created.status, 201);
    campaignId = created.body.id;
    assert.deepEqual([created.body.status, created.body.list], ['draft', 'news']);
    assert.deepEqual((await api('GET', `/campaigns/${campaignId}`)).body, created.body);
    const run = await api('POST', `/campaigns/${campaignId}/send`);
    assert.deepEqual([run.body.sent, run.body.failed, run.body.remaining], [1, 0, 0]);
    assert.deepEqual((await api('GET', `/campaigns/${campaignId}/stats`)).body, { total: 1, sent: 1, failed: 0, opened: 0, clicked: 0 });
    const list = await api('GET', '/campaigns?limit=10');
    assert.deepEqual(list.body.campaigns.map((c: { id: number; stats: { sent: number } }) => [c.id, c.stats.sent]), [[campaignId, 1]]);
    assert.equal((await api('GET', '/campaigns?offset=1')).body.campaigns.length, 0);
    const report = await api('GET', `/campaigns/${campaignId}/report?bucket=1h`);
    assert.deepEqual([report.body.id, report.body.stats.sent, report.body.links.length], [campaignId, 1, 0]);
  });

  test('campaigns: update, schedule, pause, resume, cancel, test copies, audience, status filter, delete', async () => {
    const draft = await api('POST', '/campaigns', { body: { subject: 'Later', html: '<p>Later</p>', list: 'news' } });
    const id = draft.body.id;
    const patched = await api('PATCH', `/campaigns/${id}`, { body: { subject: 'Later, changed', name: 'December' } });
    assert.deepEqual([patched.body.subject, patched.body.name, patched.body.status], ['Later, changed', 'December', 'draft']);
    assert.deepEqual((await api('GET', `/campaigns/${id}/audience`)).body, { count: 1 });
    const test = await api('POST', `/campaigns/${id}/test`, { body: { to: ['proof@example.com'] } });
    assert.deepEqual(test.body, { sent: ['proof@example.com'], failed: [] });
    assert.equal((await api('GET', `/campaigns/${id}/stats`)).body.total, 0, 'a test copy has no send row');

    const scheduled = await api('POST', `/campaigns/${id}/schedule`, { body: { send_at: '2099-01-01T09:00:00Z' } });
    assert.deepEqual([scheduled.body.status, scheduled.body.send_at], ['scheduled', '2099-01-01T09:00:00.000Z']);
    assert.deepEqual((await api('GET', '/campaigns?status=scheduled')).body.campaigns.map((c: { id: number }) => c.id), [id]);
    assert.deepEqual((await api('GET', '/campaigns?status=sent')).body.campaigns.map((c: { id: number }) => c.id), [campaignId]);
    assert.equal((await api('POST', `/campaigns/${id}/pause`)).body.status, 'paused');
    assert.equal((await api('POST', `/campaigns/${id}/resume`)).body.status, 'scheduled', 'its start time is still ahead');
    assert.equal((await api('POST', `/campaigns/${id}/cancel`)).body.status, 'cancelled');
    assert.equal((await notify().campaigns.get(id))?.status, 'cancelled', 'stored');

    const other = await api('POST', '/campaigns', { body: { subject: 'Gone', text: 'Gone' } });
    assert.equal((await api('DELETE', `/campaigns/${other.body.id}`)).status, 204);
    assert.equal(await notify().campaigns.get(other.body.id), undefined);
  });

  test('sequences: create, list, get, enroll, read the enrollment, page through enrollments', async () => {
    const created = await api('POST', '/sequences', { body: { name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Hi', markdown: '**Welcome**' }, { delayMinutes: 60, subject: 'Tips', html: '<p>Tips</p>' }] } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.steps.map((s: { delay_minutes: number }) => s.delay_minutes), [0, 60]);
    assert.deepEqual((await api('GET', '/sequences/welcome')).body, created.body);
    assert.deepEqual((await api('GET', `/sequences/${created.body.id}`)).body, created.body);
    const enrolled = await api('POST', '/sequences/welcome/enrollments', { body: { contact: 'ann@example.com' } });
    assert.equal(enrolled.status, 201);
    assert.deepEqual([enrolled.body.status, enrolled.body.step_index], ['active', 0]);
    assert.deepEqual((await api('GET', `/enrollments/${enrolled.body.id}`)).body, enrolled.body);
    await api('POST', '/contacts', { body: { email: 'eve@example.com' } });
    const eve = await api('POST', `/sequences/${created.body.id}/enrollments`, { body: { contact: 'eve@example.com' } });
    const first = await api('GET', '/sequences/welcome/enrollments?limit=1');
    assert.deepEqual(first.body.enrollments, [enrolled.body]);
    const second = await api('GET', `/sequences/welcome/enrollments?limit=1&after=${first.body.next}`);
    assert.deepEqual([second.body.enrollments, second.body.next], [[eve.body], null]);
    assert.equal((await api('GET', '/sequences/welcome/enrollments?status=completed')).body.enrollments.length, 0);
    const [summary] = (await api('GET', '/sequences')).body.sequences;
    assert.deepEqual([summary.name, summary.steps, summary.enrollments.active, summary.total], ['welcome', 2, 2, 2]);
  });

  test('imports: a CSV upload answers 202 with a job whose progress ends in the counts', async () => {
    const csv = ['Email Address,First Name,Last Name,Tags', 'cat@example.com,Cat,C,"vip"', 'dan@example.com,Dan,D,', 'not-an-address,X,Y,', 'ann@example.com,Ann,,'].join('\n');
    const started = await api('POST', '/imports?list=imported', { body: csv, headers: { 'content-type': 'text/csv' } });
    assert.equal(started.status, 202);
    assert.equal(started.headers.get('location'), `/notify/api/v1/imports/${started.body.id}`);
    assert.equal(started.body.bytes_total, Buffer.byteLength(csv));
    const done = await waitUntil(async () => {
      const job = await api('GET', `/imports/${started.body.id}`);
      return job.body.status === 'running' ? undefined : job.body;
    }, 10_000, 'the import');
    assert.deepEqual(
      { status: done.status, rows: done.rows, created: done.created, updated: done.updated, unchanged: done.unchanged, rejected: done.rejected, lines: done.rejections.map((r: { line: number }) => r.line), read: done.bytes_read },
      { status: 'done', rows: 4, created: 2, updated: 1, unchanged: 0, rejected: 1, lines: [4], read: Buffer.byteLength(csv) },
    );
    assert.deepEqual((await api('GET', '/contacts/count?list=imported')).body, { count: 3 });
    assert.deepEqual((await api('GET', '/contacts/cat@example.com')).body.lists, ['imported', 'vip']);

    // a browser's file upload: the same CSV as the `file` field of a multipart form
    const form = new FormData();
    form.set('file', new Blob(['email,name\nfay@example.com,Fay\n'], { type: 'text/csv' }), 'people.csv');
    const upload = await api('POST', '/imports', { body: form });
    assert.equal(upload.status, 202, upload.text);
    await waitUntil(async () => ((await api('GET', `/imports/${upload.body.id}`)).body.status === 'done' ? true : undefined), 10_000, 'the form upload');
    assert.equal((await api('GET', '/contacts/fay@example.com')).body.name, 'Fay');
  });

  test('every operation of the document was answered with a success here', () => {
    const succeeded = new Set([...checker.seen].filter((s) => /\s2\d\d$/.test(s)).map((s) => s.replace(/\s\d+$/, '')));
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    assert.deepEqual(operations.filter((op) => !succeeded.has(op)), []);
  });
});
