// The JSON API as deployed: `notify serve` with the admin token from the working folder's .env,
// driven over HTTP only: a list, a CSV import followed to its end, a campaign created through the
// API and sent by `notify notify:send-campaign` to a real SMTP server, its figures read back after
// a reader opens the email, an unsubscribe, a campaign's lifecycle with a test copy sent to the SMTP
// server, and the failed-auth limit on the real client address.
// Every answer is checked against the OpenAPI document the server itself serves.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DocumentChecker } from '../api/helpers.ts';
import { contactStatus } from './database.ts';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';
import { delivered, pixelUrl, READER, recipient } from './mail.ts';

const TOKEN = 'e2e-api-token-0123456789abcdef';
const PEOPLE = ['ann@example.com', 'bob@example.com', 'cy@example.com'];

describeEachEngine('as deployed: the JSON API of notify serve, token from .env', (engine) => {
  let d: Deployment;
  let url = '';
  let checker: DocumentChecker;
  before(async () => {
    d = await Deployment.open(engine, { envFile: `# the console's token\nNOTIFY_ADMIN_TOKEN=${TOKEN}\n` });
    url = (await d.serve()).url;
  });
  after(() => d?.close());

  async function api(method: string, path: string, opts: { body?: string | object; type?: string; token?: string | null } = {}) {
    const token = opts.token === undefined ? TOKEN : opts.token;
    const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const res = await fetch(`${url}/notify/api/v1${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': opts.type ?? 'application/json' } : {}) },
      body,
    });
    const text = await res.text();
    const wrong = checker?.explain(method, new URL(res.url).pathname, res.status, res.headers.get('content-type'), text);
    assert.equal(wrong, undefined, `${wrong}\n${d.describe()}`);
    return { status: res.status, headers: res.headers, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
  }

  test('the document is served without a token; a call without the right one is a 401 problem', async () => {
    const doc = await api('GET', '/openapi.json', { token: null });
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    checker = new DocumentChecker(doc.body);
    for (const token of [null, 'wrong']) {
      const res = await api('GET', '/contacts', { token });
      assert.deepEqual([res.status, res.headers.get('content-type'), res.body.code], [401, 'application/problem+json', 'UNAUTHORIZED']);
    }
  });

  let campaign = 0;
  test('a list, a CSV import followed to its end, a campaign: all through the API', async () => {
    assert.equal((await api('POST', '/lists', { body: { name: 'readers', description: 'Monthly readers' } })).status, 201);
    const csv = `email,name\n${PEOPLE.map((e) => `${e},${e.split('@')[0]}`).join('\n')}\nnot-an-address,Nobody\n`;
    const started = await api('POST', '/imports?list=readers', { body: csv, type: 'text/csv' });
    assert.equal(started.status, 202);
    const done = await waitUntil(async () => {
      const job = (await api('GET', `/imports/${started.body.id}`)).body;
      return job.status === 'running' ? undefined : job;
    }, 20_000, 'the import job');
    assert.deepEqual([done.status, done.created, done.rejected, done.rejections[0]?.line], ['done', 3, 1, 5]);
    assert.deepEqual((await api('GET', '/contacts/count?list=readers')).body, { count: 3 });

    const created = await api('POST', '/campaigns', { body: { subject: 'Hello {{ contact.name }}', markdown: 'Our [news](https://example.org/news) this month.', list: 'readers' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    campaign = created.body.id;
  });

  test('notify:send-campaign sends it to the SMTP server; the stats and report read back show a reader opening it', async () => {
    assert.ok(campaign, 'the campaign of the previous test');
    assert.match(await d.cli(['notify:send-campaign', String(campaign)]), /sent 3, failed 0/);
    const mails = await delivered(d.sink, () => true, 3);
    assert.deepEqual(mails.map(recipient).sort(), PEOPLE);
    const ann = mails.find((m) => recipient(m) === 'ann@example.com')!;
    assert.equal(ann.parsed.subject, 'Hello ann');
    assert.equal((await fetch(pixelUrl(ann), { headers: READER })).status, 200);
    assert.deepEqual((await api('GET', `/campaigns/${campaign}/stats`)).body, { total: 3, sent: 3, failed: 0, opened: 1, clicked: 0 });
    const report = (await api('GET', `/campaigns/${campaign}/report`)).body;
    assert.deepEqual([report.status, report.human.opened, report.timeline.buckets.reduce((n: number, b: { opens: number }) => n + b.opens, 0)], ['sent', 1, 1]);
    const [listed] = (await api('GET', '/campaigns')).body.campaigns;
    assert.deepEqual([listed.id, listed.stats.sent], [campaign, 3]);
  });

  test('an unsubscribe through the API is stored; the person export shows the send', async () => {
    const res = await api('POST', '/contacts/bob@example.com/unsubscribe');
    assert.equal(res.body.status, 'unsubscribed');
    assert.equal(await contactStatus(d.database, 'bob@example.com'), 'unsubscribed');
    const person = (await api('GET', '/contacts/bob@example.com/export')).body;
    assert.deepEqual(person.sends.map((s: { campaign_id: number; status: string }) => [s.campaign_id, s.status]), [[campaign, 'sent']]);
    assert.match((await api('GET', '/contacts/export.csv?status=unsubscribed')).body, /^email,name,status.*\r\nbob@example\.com,bob,unsubscribed,readers,/s);
  });

  test('the campaign lifecycle over HTTP: a test copy reaches the SMTP server, then change, schedule, pause, resume, cancel, delete', async () => {
    const draft = await api('POST', '/campaigns', { body: { subject: 'Draft for {{ contact.name }}', markdown: 'Coming soon.', list: 'readers' } });
    const id = draft.body.id;
    assert.equal((await api('PATCH', `/campaigns/${id}`, { body: { subject: 'Soon, {{ contact.name }}' } })).body.subject, 'Soon, {{ contact.name }}');
    assert.deepEqual((await api('GET', `/campaigns/${id}/audience`)).body, { count: 2 }, 'bob unsubscribed');
    assert.deepEqual((await api('POST', `/campaigns/${id}/test`, { body: { to: ['ann@example.com'] } })).body, { sent: ['ann@example.com'], failed: [] });
    const [copy] = await delivered(d.sink, (m) => m.parsed.subject === 'Soon, ann', 1);
    assert.equal(recipient(copy), 'ann@example.com');
    assert.equal((await api('GET', `/campaigns/${id}/stats`)).body.total, 0, 'a test copy is counted nowhere');

    const paused = await api('POST', `/campaigns/${id}/pause`);
    assert.deepEqual([paused.status, paused.body.code], [409, 'INVALID_STATE']);
    assert.match(paused.body.detail, /draft/);
    const past = await api('POST', `/campaigns/${id}/schedule`, { body: { send_at: '2001-01-01T00:00:00Z' } });
    assert.deepEqual([past.status, past.body.code], [422, 'INVALID_INPUT']);
    const sendAt = new Date(Date.now() + 86_400_000).toISOString();
    assert.deepEqual((await api('POST', `/campaigns/${id}/schedule`, { body: { send_at: sendAt } })).body.send_at, sendAt);
    assert.deepEqual((await api('GET', '/campaigns?status=scheduled')).body.campaigns.map((c: { id: number }) => c.id), [id]);
    assert.equal((await api('POST', `/campaigns/${id}/pause`)).body.status, 'paused');
    assert.equal((await api('POST', `/campaigns/${id}/resume`)).body.status, 'scheduled');
    assert.equal((await api('POST', `/campaigns/${id}/cancel`)).body.status, 'cancelled');
    assert.equal((await api('GET', `/campaigns/${id}`)).body.status, 'cancelled');
    assert.equal((await api('POST', `/campaigns/${id + 1000}/cancel`)).status, 404);

    const other = await api('POST', '/campaigns', { body: { subject: 'Never', text: 'Never' } });
    assert.equal((await api('DELETE', `/campaigns/${other.body.id}`)).status, 204);
    assert.equal((await api('GET', `/campaigns/${other.body.id}`)).status, 404);
  });

  test('failed attempts from one address: the 11th is 429 with Retry-After, and the right token waits too', async () => {
    // the first test made two failed attempts from this address already
    for (let i = 2; i < 10; i++) assert.equal((await api('GET', '/lists', { token: `guess-${i}` })).status, 401);
    const limited = await api('GET', '/lists', { token: 'guess-10' });
    assert.deepEqual([limited.status, limited.body.code], [429, 'RATE_LIMITED']);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await api('GET', '/lists')).status, 429);
  });
});
