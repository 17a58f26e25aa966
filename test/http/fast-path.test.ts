import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call, serve } from '../helpers/http.ts';
import { clickPath, eventsOf, insertCampaign, insertSend } from '../helpers/sends.ts';

/**
 * notify.listener answers opens and cached clicks on node:http directly (http/fast-path.ts) and
 * hands everything else to the routes. Over a real socket, each answer must be the one
 * notify.fetch gives for the same request, and each must record the same event.
 */
const UA = { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' };
/** every header a client or cache acts on: the redirect, the image, and the 404 page's security headers */
const SAME = ['content-type', 'content-length', 'cache-control', 'location', 'referrer-policy', 'content-security-policy', 'x-content-type-options', 'x-robots-tag'];

/**
 * Status, the headers above and the body bytes. node:http adds the length of a page the route left
 * unsized, a web Response carries none: a length must match the body, and is then compared as the body's.
 */
async function snapshot(res: Response, method = 'GET') {
  const bytes = Buffer.from(await res.arrayBuffer());
  const headers = Object.fromEntries(SAME.map((h) => [h, res.headers.get(h)]));
  if (method !== 'HEAD') {
    if (headers['content-length'] !== null) assert.equal(headers['content-length'], String(bytes.length), 'content-length is the body length');
    headers['content-length'] = String(bytes.length);
  }
  return { status: res.status, headers, body: bytes.toString('base64') };
}

forEachEngine('node:http fast path for opens and clicks', (h) => {
  const notify = useNotify(h, { trackIpAddress: true, trustProxy: true });

  test('the same answers over a socket as through notify.fetch, and an event for each', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const urls = ['https://example.com/a?x=1&y=2', 'https://example.org/ü'];
    await notify().context.store.links.ensureScope(`c${campaignId}`, urls, Date.now());
    const send = await insertSend(notify(), { campaignId });
    const srv = await serve(notify());
    try {
      const cases: [string, RequestInit][] = [
        [`/notify/open/${send.token}`, { headers: UA }],
        [`/notify/open/${send.token}?utm=x`, { headers: UA }],
        [`/notify/open/${send.token}`, { method: 'HEAD', headers: UA }],
        [`/notify/open/${send.token.slice(1)}`, {}], // malformed: the GIF, nothing recorded
        [clickPath(notify(), send.token, `c${campaignId}`, 0), { headers: { ...UA, 'x-forwarded-for': '198.51.100.7' } }], // first click of the scope: the route loads its links
        [clickPath(notify(), send.token, `c${campaignId}`, 0), { headers: { ...UA, 'x-forwarded-for': '198.51.100.8' } }], // cached: the fast path
        [clickPath(notify(), send.token, `c${campaignId}`, 1), { headers: UA }],
        [`${clickPath(notify(), send.token, `c${campaignId}`, 0)}x`, {}], // tampered signature: 404 page
        [clickPath(notify(), send.token, `c${campaignId}`, 2), {}], // valid signature, no such link: 404 page
        [clickPath(notify(), send.token, 'c999999', 0), {}], // valid signature, a scope with no links: 404 page
      ];
      for (const [path, init] of cases) {
        const overSocket = await snapshot(await fetch(srv.url + path, { ...init, redirect: 'manual' }), init.method);
        const inProcess = await snapshot(await call(notify(), path, { ...init, redirect: 'manual' }), init.method);
        assert.deepEqual(overSocket, inProcess, `${init.method ?? 'GET'} ${path}`);
        if (overSocket.status === 404) assert.match(Buffer.from(overSocket.body, 'base64').toString(), /<html|<!doctype/i, 'the link_invalid page');
      }
    } finally {
      await srv.close();
    }
    await notify().flush();
    const opens = await eventsOf(notify().context.store, send.id, 'open');
    const clicks = await eventsOf(notify().context.store, send.id, 'click');
    assert.equal(opens.length, 6, 'three well-formed opens, each over the socket and in-process');
    assert.equal(clicks.length, 6, 'three good clicks, each over the socket and in-process');
    // trustProxy: X-Forwarded-For wherever it is sent; else the socket address, and none in-process
    const ips = clicks.map((e) => (e.metadata as { ip?: string }).ip ?? 'none').sort();
    assert.deepEqual(ips, ['', '127.0.0.1', '198.51.100.7', '198.51.100.7', '198.51.100.8', '198.51.100.8']);
  });
});

/** one GET over a raw socket, its header lines as written (fetch would fold their names to lower case) */
function rawGet(url: string, path: string, headerLines: string[]): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${headerLines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`));
    let text = '';
    socket.setEncoding('latin1').on('data', (d) => (text += d)).on('end', () => resolve(text)).on('error', reject);
  });
}

forEachEngine('node:http fast path: the user agent as the client wrote it', (h) => {
  const notify = useNotify(h);

  test('an open reads User-Agent whatever the case of its name, the first of two, and none as no user agent', async () => {
    const send = await insertSend(notify(), { campaignId: await insertCampaign(notify().context.store) });
    const srv = await serve(notify());
    try {
      for (const lines of [['USER-AGENT: curl/8.5.0'], ['user-agent: curl/8.5.0', `User-Agent: ${UA['user-agent']}`], [`User-agent: ${UA['user-agent']}`], ['Accept: image/*']]) {
        assert.match(await rawGet(srv.url, `/notify/open/${send.token}`, lines), /^HTTP\/1\.1 200 /);
      }
    } finally {
      await srv.close();
    }
    await notify().flush();
    const opens = await eventsOf(notify().context.store, send.id, 'open');
    assert.deepEqual(
      opens.map((e) => e.machine_reason),
      ['bot_user_agent', 'bot_user_agent', null, 'no_user_agent'],
    );
  });
});

forEachEngine('node:http fast path with the database down', (h) => {
  test('a click that needs its links read gets the same error answer as notify.fetch, and the server keeps serving', async () => {
    const notify = await createNotify(testOptions(h.url, { logLevel: 'silent' }));
    const send = await insertSend(notify);
    await notify.context.store.links.ensureScope(`m${send.id}`, ['https://example.com/'], Date.now());
    await notify.context.store.close();
    const srv = await serve(notify);
    try {
      const path = clickPath(notify, send.token, `m${send.id}`, 0);
      const overSocket = await snapshot(await fetch(srv.url + path, { redirect: 'manual' }));
      const inProcess = await snapshot(await call(notify, path, { redirect: 'manual' }));
      assert.equal(overSocket.status, 500);
      assert.equal(overSocket.headers.location, null, 'never a redirect to an unchecked place');
      assert.deepEqual(overSocket, inProcess);
      // the read the fast path started failed too; nothing is left unhandled and opens still answer
      await new Promise((resolve) => setTimeout(resolve, 50));
      const open = await fetch(`${srv.url}/notify/open/${send.token}`);
      assert.equal(open.status, 200);
      assert.equal((await open.arrayBuffer()).byteLength, 43);
    } finally {
      await srv.close();
      await notify.close();
    }
  });
});
