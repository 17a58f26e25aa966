import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { getRequestListener, serve as honoServe } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { keepRawBody, notifyExpress } from '../../src/http/adapters/express.ts';
import { notifyFastify } from '../../src/http/adapters/fastify.ts';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { clickPath, eventsOf, insertSend } from '../helpers/sends.ts';

// Exact bytes a signature would be computed over: odd spacing, key order, unicode escapes.
const WEBHOOK_BODY = '{ "b":1,  "a" : "\\u00e9t\\u00e9",\n"z":[ 1 ,2 ] }';

/** Stands in for the webhook handler: answers with the bytes it received. */
function echoNotify(notify: Notify): Pick<Notify, 'listener' | 'context'> {
  const app = new Hono();
  app.all('/notify/*', async (c) => c.json({ path: c.req.path, body: Buffer.from(await c.req.arrayBuffer()).toString('utf8') }));
  return { listener: getRequestListener(app.fetch), context: notify.context };
}

async function listen(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const postJson = (url: string) => fetch(url, { method: 'POST', body: WEBHOOK_BODY, headers: { 'content-type': 'application/json' } });

async function pixelAndClick(base: string, notify: Notify): Promise<void> {
  const send = await insertSend(notify);
  await notify.context.store.links.ensureScope(`m${send.id}`, ['https://example.com/landing'], Date.now());
  const gif = await fetch(`${base}/notify/open/${send.token}`);
  assert.equal(gif.status, 200);
  assert.equal(gif.headers.get('content-type'), 'image/gif');
  assert.equal((await gif.arrayBuffer()).byteLength, 43);
  const click = await fetch(`${base}${clickPath(notify, send.token, `m${send.id}`, 0)}`, { redirect: 'manual' });
  assert.equal(click.status, 302);
  assert.equal(click.headers.get('location'), 'https://example.com/landing');
  const unsub = await fetch(`${base}/notify/unsubscribe/${send.unsubscribeToken}`, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(unsub.status, 200);
  assert.equal((await notify.contacts.get(send.contactId))?.status, 'unsubscribed');
  await notify.flush();
  const [open] = await eventsOf(notify.context.store, send.id, 'open');
  const [clicked] = await eventsOf(notify.context.store, send.id, 'click');
  assert.ok(open && clicked);
  assert.deepEqual(clicked.metadata, { ip: '127.0.0.1' }, 'the client IP comes through the adapter');
}

forEachEngine('mounting', (h) => {
  const notify = useNotify(h, { trackIpAddress: true });

  test('Express 5: endpoints work, other paths pass on, webhook bytes survive body parsers', async () => {
    const app = express();
    app.use(express.json({ verify: keepRawBody }));
    app.use(notifyExpress(notify()));
    app.post('/api/echo', (req, res) => {
      res.json({ parsed: req.body });
    });
    const srv = await listen(createServer(app));
    try {
      await pixelAndClick(srv.url, notify());
      const own = await postJson(`${srv.url}/api/echo`);
      assert.deepEqual(await own.json(), { parsed: { b: 1, a: 'été', z: [1, 2] } }, 'the app keeps its parsed JSON');
      assert.equal((await fetch(`${srv.url}/notify/nope`)).status, 404);
    } finally {
      await srv.close();
    }
  });

  test('Express 5: raw body forwarding before, after keepRawBody, after express.text, after a plain express.json', async () => {
    const echo = echoNotify(notify());
    const before = express();
    before.use(notifyExpress(echo));
    before.use(express.json());
    const withVerify = express();
    withVerify.use(express.json({ verify: keepRawBody }));
    withVerify.use('/notify', notifyExpress(echo));
    const withText = express();
    withText.use(express.text({ type: '*/*' }));
    withText.use(notifyExpress(echo));
    const plain = express();
    plain.use(express.json());
    plain.use(express.urlencoded());
    plain.use(notifyExpress(echo));
    for (const [what, app] of [
      ['before parsers', before],
      ['keepRawBody', withVerify],
      ['express.text', withText],
    ] as const) {
      const srv = await listen(createServer(app));
      try {
        const res = await postJson(`${srv.url}/notify/webhook`);
        assert.deepEqual(await res.json(), { path: '/notify/webhook', body: WEBHOOK_BODY }, what);
      } finally {
        await srv.close();
      }
    }
    const srv = await listen(createServer(plain));
    try {
      const refused = await postJson(`${srv.url}/notify/webhook`);
      assert.equal(refused.status, 500);
      assert.match(await refused.text(), /keepRawBody/);
      const form = await fetch(`${srv.url}/notify/capture`, { method: 'POST', body: 'email=a%40example.com&list=news', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.deepEqual(await form.json(), { path: '/notify/capture', body: 'email=a%40example.com&list=news' }, 'forms are re-encoded');
    } finally {
      await srv.close();
    }
  });

  test('Fastify 5: endpoints work and the webhook gets the exact bytes while the app parses JSON', async () => {
    for (const target of [notify(), echoNotify(notify())]) {
      const app = Fastify();
      await app.register(notifyFastify(target));
      app.post('/api/echo', async (req) => ({ parsed: req.body }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      try {
        const own = await postJson(`${base}/api/echo`);
        assert.deepEqual(await own.json(), { parsed: { b: 1, a: 'été', z: [1, 2] } }, 'the app keeps its JSON parser');
        if (target === notify()) {
          await pixelAndClick(base, notify());
          assert.equal((await fetch(`${base}/notify/open/x`, { method: 'HEAD' })).status, 200);
        } else {
          assert.deepEqual(await (await postJson(`${base}/notify/webhook`)).json(), { path: '/notify/webhook', body: WEBHOOK_BODY });
          const plain = await fetch(`${base}/notify/webhook`, { method: 'POST', body: 'Type=Notification', headers: { 'content-type': 'text/plain' } });
          assert.deepEqual(await plain.json(), { path: '/notify/webhook', body: 'Type=Notification' });
        }
      } finally {
        await app.close();
      }
    }
  });

  test('Hono host on @hono/node-server and a plain node:http server', async () => {
    const host = new Hono<{ Bindings: { incoming: unknown } }>();
    host.all('/notify/*', (c) => notify().fetch(c.req.raw, c.env as never));
    host.get('/', (c) => c.text('home'));
    const server = honoServe({ fetch: host.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', resolve)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await pixelAndClick(base, notify());
      assert.equal(await (await fetch(`${base}/`)).text(), 'home');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const plain = await listen(
      createServer((req, res) => {
        if (req.url?.startsWith('/notify/')) return notify().listener(req, res);
        res.end('app');
      }),
    );
    try {
      await pixelAndClick(plain.url, notify());
      assert.equal(await (await fetch(`${plain.url}/other`)).text(), 'app');
    } finally {
      await plain.close();
    }
  });
});
