import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { linkRef, scopeSignature } from '../../src/core/link-refs.ts';
import { newToken } from '../../src/core/tokens.ts';
import { type ClickResolver, createClickResolver } from '../../src/core/click-resolver.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { forEachEngine, testOptions, useStore } from '../helpers/engines.ts';
import { call, serve } from '../helpers/http.ts';
import { eventsOf } from '../helpers/sends.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * A campaign whose links differ per recipient grows its link list batch by batch. A server that
 * already served a click of that campaign holds the list as it was then; a link added by a later
 * batch must still redirect, served by `notify serve` beside a separate `notify worker`.
 */
const BODY = '<p><a href="https://example.com/all">All</a>{% if contact.attributes.vip %} <a href="https://example.com/vip">VIP lounge</a>{% endif %}</p>';

/** Every click URL of a delivered email, in order, as the recipient's client would follow it. */
function clickUrls(sink: SmtpSink, to: string): URL[] {
  const m = sink.messages.find((x) => x.envelope.to.includes(to));
  assert.ok(m, `a message to ${to}`);
  const html = String(m.parsed.html);
  return [...html.matchAll(/href="([^"]*\/notify\/click\/[^"]+)"/g)].map((x) => new URL(x[1].replace(/&amp;/g, '&')));
}

forEachEngine('clicks on links a later batch added', (h) => {
  let sink: SmtpSink;
  let worker: Notify;
  let viaFetch: Notify;
  let viaSocket: Notify;
  before(async () => {
    sink = await startSmtpSink();
    worker = await createNotify(testOptions(h.url, { mailer: sink.url, batchSize: 1 }));
    // two serving processes: one answering through notify.fetch, one through notify.listener on a socket
    viaFetch = await createNotify(testOptions(h.url));
    viaSocket = await createNotify(testOptions(h.url));
  });
  after(async () => {
    for (const n of [worker, viaFetch, viaSocket]) await n?.close();
    await sink?.close();
  });

  test('a running server redirects a link its cached copy of the campaign did not have', async () => {
    await worker.contacts.upsert({ email: 'ann@example.com', lists: ['news'] });
    await worker.contacts.upsert({ email: 'vip@example.com', lists: ['news'], attributes: { vip: true } });
    const c = await worker.campaigns.create({ subject: 'News', html: BODY, list: 'news' });
    const srv = await serve(viaSocket);
    const overSocket = (u: URL) => fetch(`${srv.url}${u.pathname}${u.search}`, { redirect: 'manual' });
    const inProcess = (n: Notify) => (u: URL) => call(n, `${u.pathname}${u.search}`, { redirect: 'manual' });
    try {
      assert.equal((await worker.campaigns.send(c.id)).sent, 1, 'batch 1');
      await sink.waitFor(1);
      const [annAll] = clickUrls(sink, 'ann@example.com');
      // both servers read the campaign's links now, while it has one
      for (const click of [overSocket, inProcess(viaFetch), overSocket]) {
        const res = await click(annAll);
        assert.equal(res.status, 302);
        assert.equal(res.headers.get('location'), 'https://example.com/all');
      }

      assert.equal((await worker.campaigns.send(c.id)).sent, 1, 'batch 2');
      await sink.waitFor(2);
      const vipLinks = clickUrls(sink, 'vip@example.com');
      assert.equal(vipLinks.length, 2);
      for (const [what, click] of [
        ['listener', overSocket],
        ['notify.fetch', inProcess(viaFetch)],
      ] as const) {
        const res = await click(vipLinks[1]);
        assert.equal(res.status, 302, what);
        assert.equal(res.headers.get('location'), 'https://example.com/vip', what);
        // and again: now from memory
        assert.equal((await click(vipLinks[1])).headers.get('location'), 'https://example.com/vip', what);
        assert.equal((await click(vipLinks[0])).headers.get('location'), 'https://example.com/all', what);
      }
    } finally {
      await srv.close();
    }
    await viaFetch.flush();
    await viaSocket.flush();
    const store = worker.context.store;
    const sendId = Number((await store.db.selectFrom('notify_sends').select('id').where('to_email', '=', 'vip@example.com').executeTakeFirstOrThrow()).id);
    const clicks = await eventsOf(store, sendId, 'click');
    assert.deepEqual(
      clicks.map((e) => e.link_index).sort(),
      [0, 0, 1, 1, 1, 1],
      'every redirected click is recorded with its link',
    );
    assert.equal((await worker.campaigns.getCampaignStats(c.id)).clicked, 2);
  });
});

/**
 * A drip step's scope is the step: its link list grows when a later run renders it differently. Here
 * its layout file gains a footer link between two runs (each run a new instance, as a cron's
 * `notify:process-drips` is), while one serving instance holds the list from before.
 */
forEachEngine('clicks on a link a changed drip layout added', (h) => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-drip-layout-'));
  const layout = join(dir, 'views/brand/news.liquid');
  let sink: SmtpSink;
  let server: Notify;
  before(async () => {
    mkdirSync(join(dir, 'views/brand'), { recursive: true });
    writeFileSync(layout, '<html><body>{{ content | raw }}</body></html>');
    sink = await startSmtpSink();
    server = await createNotify(testOptions(h.url));
  });
  after(async () => {
    await server?.close();
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** one process-drips run by an instance of its own, reading the layout file as it is now */
  const run = async () => {
    const worker = await createNotify(testOptions(h.url, { mailer: sink.url, viewsPath: join(dir, 'views'), batchSize: 1 }));
    try {
      return await worker.drips.process();
    } finally {
      await worker.close();
    }
  };

  test('the serving instance redirects the footer link the second run added to the step', async () => {
    const setup = await createNotify(testOptions(h.url, { viewsPath: join(dir, 'views') }));
    try {
      await setup.contacts.upsert({ email: 'ann@example.com' });
      await setup.contacts.upsert({ email: 'bob@example.com' });
      await setup.drips.createSequence({
        name: 'welcome',
        steps: [{ delayMinutes: 0, subject: 'Welcome', html: '<p><a href="https://example.com/start">Start here</a></p>', layout: 'brand/news' }],
      });
      await setup.drips.enroll({ contact: 'ann@example.com', sequence: 'welcome' });
      await setup.drips.enroll({ contact: 'bob@example.com', sequence: 'welcome' });
    } finally {
      await setup.close();
    }
    const click = (u: URL) => call(server, `${u.pathname}${u.search}`, { redirect: 'manual' });

    assert.equal((await run()).sent, 1, 'run 1: one enrollment (batchSize 1)');
    await sink.waitFor(1);
    const [first] = sink.messages;
    const firstTo = first.envelope.to[0];
    const [start] = clickUrls(sink, firstTo);
    assert.equal((await click(start)).headers.get('location'), 'https://example.com/start', 'the server now holds the step with one link');

    writeFileSync(layout, '<html><body>{{ content | raw }}<footer><a href="https://example.com/help">Help</a></footer></body></html>');
    assert.equal((await run()).sent, 1, 'run 2: the other enrollment, rendered with the new layout');
    await sink.waitFor(2);
    const second = clickUrls(sink, firstTo === 'ann@example.com' ? 'bob@example.com' : 'ann@example.com');
    assert.equal(second.length, 2);
    for (const [u, to] of [
      [second[1], 'https://example.com/help'],
      [second[0], 'https://example.com/start'],
      [start, 'https://example.com/start'],
    ] as const) {
      const res = await click(u);
      assert.equal(res.status, 302, to);
      assert.equal(res.headers.get('location'), to);
    }
  });
});

forEachEngine('re-reading a scope for a link it lacked is bounded', (h) => {
  const store = useStore(h);
  const secret = 'bounded-test-secret';
  const token = newToken();
  let reads = 0;
  let t = 1000;
  /** a resolver over the real store that counts the scope reads it makes; time moves only when told */
  const resolver = (s = store()): ClickResolver =>
    createClickResolver(
      {
        secret,
        log: pino({ level: 'silent' }),
        store: {
          ...s,
          links: {
            ...s.links,
            urlsForScope: (scope: string) => {
              reads++;
              return s.links.urlsForScope(scope);
            },
          },
        },
      },
      { refreshMs: 1000, now: () => t },
    );
  const ref = (scope: string, index: number, sig = scopeSignature(secret, token, scope)) => linkRef(scope, index, sig);
  const urlOf = async (r: ReturnType<ClickResolver>) => (await r)?.url;

  test('junk never queries; a wrong index under a valid signature reads once per refreshMs; hits never', async () => {
    const scope = 'c7001';
    await store().links.ensureScope(scope, ['https://example.com/0'], t);
    const resolve = resolver();
    assert.equal(await urlOf(resolve(token, ref(scope, 0))), 'https://example.com/0');
    assert.equal(reads, 1, 'the first click reads the scope');

    reads = 0;
    const forged = ['', 'x', `${scope}.0.${'A'.repeat(16)}`, ref(scope, 5, scopeSignature(secret, newToken(), scope)), ref('c7002', 0, scopeSignature(secret, token, scope))];
    for (let i = 0; i < 50; i++) for (const r of forged) assert.equal(await resolve(token, r), undefined, r);
    for (let i = 0; i < 50; i++) assert.equal(await urlOf(resolve(token, ref(scope, 0))), 'https://example.com/0');
    assert.equal(reads, 0, 'references without a valid signature, and hits, cost no query');

    // twenty misses at once share one read; more in the same second read nothing
    const burst = await Promise.all(Array.from({ length: 20 }, () => resolve(token, ref(scope, 9))));
    assert.deepEqual(new Set(burst), new Set([undefined]));
    for (let i = 0; i < 50; i++) assert.equal(await resolve(token, ref(scope, 9)), undefined);
    assert.equal(reads, 1, 'one re-read for 70 misses within refreshMs');

    // the link appears (a later batch); it is found once refreshMs has passed since the last re-read
    await store().links.ensureScope(scope, ['https://example.com/0', 'https://example.com/1'], t);
    assert.equal(await resolve(token, ref(scope, 1)), undefined, 'still within refreshMs of the last re-read');
    t += 1000;
    assert.equal(await urlOf(resolve(token, ref(scope, 1))), 'https://example.com/1');
    assert.equal(reads, 2);
    for (let i = 0; i < 20; i++) await resolve(token, ref(scope, 1));
    assert.equal(reads, 2, 'the new link is served from memory');
  });

  test('a scope with no links is read at most once per refreshMs too', async () => {
    const resolve = resolver();
    reads = 0;
    for (let i = 0; i < 30; i++) assert.equal(await resolve(token, ref('s7003', 0)), undefined);
    assert.equal(reads, 2, 'the first read, then one re-read');
    t += 1000;
    await store().links.ensureScope('s7003', ['https://example.com/late'], t);
    assert.equal(await urlOf(resolve(token, ref('s7003', 0))), 'https://example.com/late');
    assert.equal(reads, 3);
  });

  test('a re-read that fails answers from memory: known links still redirect, the missing one is a 404, nothing throws', async () => {
    const own = createStore(h.url);
    const resolve = resolver(own);
    await own.links.ensureScope('c7004', ['https://example.com/kept'], t);
    assert.equal(await urlOf(resolve(token, ref('c7004', 0))), 'https://example.com/kept');
    await own.close();
    t += 1000;
    assert.equal(await resolve(token, ref('c7004', 3)), undefined);
    assert.equal(await urlOf(resolve(token, ref('c7004', 0))), 'https://example.com/kept');
  });
});
