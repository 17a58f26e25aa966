import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { manualClock } from '../../src/core/clock.ts';
import { keepRawBody, notifyExpress, notifyFastify } from '../../src/index.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { insertSend } from '../helpers/sends.ts';
import { fakeFetch, sesBounce, sesComplaint, signedSns, TEST_NOW, TEST_TOPIC } from './helpers.ts';

async function listen(app: express.Express) {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

forEachEngine('webhook behind framework body parsers', (h) => {
  const notify = useNotify(h, { webhookDriver: 'ses', snsTopicArns: [TEST_TOPIC], fetch: fakeFetch().fetch, clock: manualClock(TEST_NOW) });

  test('express.json() and express.text() mounted first: SNS (text/plain) and JSON bodies still verify', async () => {
    const a = await insertSend(notify());
    const b = await insertSend(notify());
    const emailOf = async (id: number) => (await notify().contacts.get(id))!.email;
    const app = express();
    app.use(express.json({ verify: keepRawBody }));
    app.use(express.text());
    app.use(notifyExpress(notify()));
    const srv = await listen(app);
    try {
      const asText = JSON.stringify(signedSns({ Type: 'Notification', Message: sesBounce('Permanent', [await emailOf(a.contactId)]) }), null, 2);
      const r1 = await fetch(`${srv.url}/notify/webhook`, { method: 'POST', body: asText, headers: { 'content-type': 'text/plain; charset=UTF-8' } });
      assert.equal(r1.status, 200, await r1.text());
      const asJson = JSON.stringify(signedSns({ Type: 'Notification', Message: sesComplaint([await emailOf(b.contactId)]) }));
      const r2 = await fetch(`${srv.url}/notify/webhook`, { method: 'POST', body: asJson, headers: { 'content-type': 'application/json' } });
      assert.equal(r2.status, 200, await r2.text());
      const forged = await fetch(`${srv.url}/notify/webhook`, { method: 'POST', body: asJson.replace('Complaint', 'Bounce'), headers: { 'content-type': 'application/json' } });
      assert.equal(forged.status, 403);
    } finally {
      await srv.close();
    }
    assert.equal((await notify().contacts.get(a.contactId))?.status, 'bounced');
    assert.equal((await notify().contacts.get(b.contactId))?.status, 'complained');
  });

  test('a plain express.json() first: SNS posts text/plain, which it leaves alone, so the signature verifies', async () => {
    const c = await insertSend(notify());
    const app = express();
    app.use(express.json());
    app.use(notifyExpress(notify()));
    const srv = await listen(app);
    try {
      const body = JSON.stringify(signedSns({ Type: 'Notification', Message: sesBounce('Permanent', [(await notify().contacts.get(c.contactId))!.email]) }));
      const res = await fetch(`${srv.url}/notify/webhook`, { method: 'POST', body, headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' } });
      assert.equal(res.status, 200, await res.text());
    } finally {
      await srv.close();
    }
    assert.equal((await notify().contacts.get(c.contactId))?.status, 'bounced');
  });

  test('Fastify with its JSON parser: the plugin hands the exact bytes on', async () => {
    const c = await insertSend(notify());
    const app = Fastify();
    app.post('/api/echo', async (req) => ({ parsed: req.body }));
    await app.register(notifyFastify(notify()));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const body = JSON.stringify(signedSns({ Type: 'Notification', Message: sesComplaint([(await notify().contacts.get(c.contactId))!.email]) }), null, 1);
      const res = await fetch(`http://127.0.0.1:${port}/notify/webhook`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 200, await res.text());
      const echo = await fetch(`http://127.0.0.1:${port}/api/echo`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
      assert.deepEqual(await echo.json(), { parsed: { a: 1 } });
    } finally {
      await app.close();
    }
    assert.equal((await notify().contacts.get(c.contactId))?.status, 'complained');
  });
});
