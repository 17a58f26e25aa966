import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call, serve } from '../helpers/http.ts';
import { clickPath, eventsOf, insertCampaign, insertSend } from '../helpers/sends.ts';

/**
 * notify.listener answers opens and cached clicks on node:http directly (http/fast-path.ts) and
 * hands everything else to the routes. Over a real socket, each answer must be the one
 * notify.fetch gives for the same request, and each must record the same event.
 */
const UA = { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' };
const SAME = ['content-type', 'content-length', 'cache-control', 'location', 'referrer-policy'];

async function snapshot(res: Response) {
  const body = Buffer.from(await res.arrayBuffer()).toString('base64');
  return { status: res.status, headers: Object.fromEntries(SAME.map((h) => [h, res.headers.get(h)])), body };
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
      ];
      for (const [path, init] of cases) {
        const overSocket = await snapshot(await fetch(srv.url + path, { ...init, redirect: 'manual' }));
        const inProcess = await snapshot(await call(notify(), path, { ...init, redirect: 'manual' }));
        if (overSocket.status === 404) {
          assert.equal(inProcess.status, 404, path);
          continue;
        }
        assert.deepEqual(overSocket, inProcess, `${init.method ?? 'GET'} ${path}`);
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
