import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { RETRY_FOR_MS } from '../../src/core/outbound-delivery.ts';
import { dripWorld, type DripWorld } from '../drips/helpers.ts';
import { ENGINES } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { startReceiver } from './receiver.ts';

const ADMIN = 'admin-token-0123456789abcdef';
const rows = (w: DripWorld) => w.notify.context.store.db.selectFrom('notify_outbound_events').selectAll().orderBy('id').execute();

for (const engine of ENGINES) {
  const worlds: DripWorld[] = [];
  after(async () => {
    for (const w of worlds) await w.close();
  });

  test(`[${engine}] a receiver down for the first minutes then up gets every event caused, each id at least once, the same id on every try`, async () => {
    const receiver = await startReceiver();
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's3cret', events: ['notify:contact.subscribed'] }] });
    worlds.push(w);
    await receiver.down();
    const caused: string[] = [];
    for (let minute = 0; minute < 6; minute++) {
      await w.notify.contacts.upsert({ email: `m${minute}@example.com`, lists: ['news'] });
      caused.push(`m${minute}@example.com`);
      const r = await w.notify.events.deliver();
      assert.equal(r.delivered, 0, 'nobody listening yet');
      w.clock.advance(60_000);
    }
    const pending = await rows(w);
    assert.ok(pending.every((p) => p.status === 'pending' && Number(p.attempts) >= 1 && /ECONNREFUSED/.test(String(p.last_error))), 'refused, kept for a retry');
    const ids = new Map(pending.map((p) => [Number(p.id), p.event_id]));
    await receiver.up();
    // retries follow the backoff: within its longest step everything has been tried again
    for (let i = 0; i < 12; i++) {
      await w.notify.events.deliver();
      w.clock.advance(5 * 60_000);
    }
    await receiver.close();
    const got = receiver.received.map((e) => (e.data.contact as { email: string }).email);
    assert.deepEqual(new Set(got), new Set(caused), 'set equality with what was caused');
    assert.deepEqual(new Set(receiver.received.map((e) => e.id)), new Set(ids.values()), 'the ids written with the cause are the ids delivered');
    assert.ok((await rows(w)).every((r) => r.status === 'delivered' && r.event_id === ids.get(Number(r.id))));
  });

  test(`[${engine}] 301 is not followed, 500 is retried, a 10 MB answer is not read, no answer times out; after 24 h an event is dead`, async (t) => {
    let mode: 'redirect' | 'error' | 'huge' | 'silent' = 'redirect';
    const hanging: (() => void)[] = [];
    let hugeWritten = 0;
    const receiver = await startReceiver((_req, res) => {
      if (mode === 'redirect') return void res.writeHead(301, { location: 'http://127.0.0.1:9/elsewhere' }).end();
      if (mode === 'error') return void res.writeHead(500).end('database on fire');
      if (mode === 'silent') return void hanging.push(() => res.destroy());
      // 10 MB of 2xx body, written as fast as the client takes it
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const write = () => {
        while (hugeWritten < 10 * 1024 * 1024) {
          hugeWritten += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      res.on('close', () => {});
      write();
    });
    const w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 's' }], adminToken: ADMIN });
    worlds.push(w);
    t.after(() => receiver.close());
    await w.notify.contacts.upsert({ email: 'r@example.com', lists: ['news'] });
    const one = async () => (await rows(w))[0];

    await w.notify.events.deliver();
    assert.equal(receiver.received.length, 1);
    // the next tries wait (backoff): nothing is due a moment later
    assert.equal((await w.notify.events.deliver()).retried, 0);
    assert.match(String((await one()).last_error), /answered 301 \(redirect to http:\/\/127\.0\.0\.1:9\/elsewhere not followed\)/);
    assert.equal((await one()).status, 'pending');

    mode = 'error';
    w.clock.advance(60_000);
    await w.notify.events.deliver();
    assert.match(String((await one()).last_error), /answered 500: database on fire/);

    mode = 'silent';
    w.clock.advance(60_000);
    const started = Date.now();
    await w.notify.events.deliver();
    const waited = Date.now() - started;
    for (const h of hanging) h();
    assert.match(String((await one()).last_error), /no answer within 5 s/);
    assert.ok(waited >= 4500 && waited < 30_000, `gave up after ${waited} ms`);

    mode = 'huge';
    w.clock.advance(60 * 60_000);
    const rss = process.memoryUsage().rss;
    await w.notify.events.deliver();
    assert.equal((await one()).status, 'delivered', 'a 2xx with a huge body is delivered');
    assert.ok(hugeWritten < 10 * 1024 * 1024, `the body was not read to its end (${hugeWritten} bytes written)`);
    assert.ok(process.memoryUsage().rss - rss < 8 * 1024 * 1024, 'and not buffered');
    const ids = new Set(receiver.received.map((e) => e.id));
    assert.equal(ids.size, 1, 'one id on every try');

    // a second event that never gets a 2xx dies at 24 h and shows why
    mode = 'error';
    await w.notify.contacts.upsert({ email: 'r@example.com', lists: ['other'] });
    for (let i = 0; i < 40 && (await rows(w))[1].status === 'pending'; i++) {
      w.clock.advance(60 * 60_000);
      await w.notify.events.deliver();
    }
    const dead = (await rows(w))[1];
    assert.equal(dead.status, 'dead');
    assert.ok(w.clock.now() - Number(dead.created_at) >= RETRY_FOR_MS);
    assert.match(String(dead.last_error), /answered 500/);
    const attempts = Number(dead.attempts);
    w.clock.advance(24 * 60 * 60_000);
    await w.notify.events.deliver();
    assert.equal(Number((await rows(w))[1].attempts), attempts, 'a dead event is not tried again');
    const page = await call(w.notify, '/notify/admin/webhooks', { headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /dead: 1/);
    assert.match(html, /delivered: 1/);
    assert.ok(html.includes(dead.event_id) && html.includes('answered 500: database on fire'), 'the admin shows the dead event and why');
  });
}
