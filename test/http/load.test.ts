import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { Agent, get } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliEntry, compiledEntry } from '../helpers/compiled-entry.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { serve } from '../helpers/http.ts';
import { insertCampaign, insertSend, sendRow } from '../helpers/sends.ts';

const N = 5_000;
const ROOT = join(import.meta.dirname, '../..');
const SERVE_CHILD = compiledEntry(join(ROOT, 'test/fixtures/serve-child.ts'));

/** n GETs of url, `concurrency` sockets at a time (keep-alive); resolves when every body is read. */
async function hammer(url: string, n: number, concurrency = 100): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      get(url, { agent, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0' } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => (res.statusCode === 200 && bytes === 43 ? resolve() : reject(new Error(`status ${res.statusCode}, ${bytes} bytes`))));
      }).on('error', reject);
    });
  try {
    await Promise.all(Array.from({ length: n }, one));
  } finally {
    agent.destroy();
  }
}

/** Spawns a server process and resolves with its URL once it listens. */
function spawnServer(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1], exited });
    });
    exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${out} ${err}`)));
  });
}

forEachEngine('pixel load', (h) => {
  const notify = useNotify(h);

  const countOpens = async (sendId: number) =>
    Number(
      (
        await notify()
          .context.store.db.selectFrom('notify_events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('send_id', '=', sendId)
          .where('type', '=', 'open')
          .executeTakeFirstOrThrow()
      ).n,
    );

  const assertOneFirstOpen = async (send: { id: number; campaignId: number | null }, n = N) => {
    assert.equal(await countOpens(send.id), n);
    assert.notEqual((await sendRow(notify().context.store, send.id)).opened_at, null);
    const c = await notify().context.store.counters.get(send.campaignId!);
    assert.deepEqual([c.opened, c.human_opened], [1, 1]);
  };

  test(`${N} concurrent pixel requests leave exactly ${N} open events and one first open`, async () => {
    const send = await insertSend(notify(), { campaignId: await insertCampaign(notify().context.store) });
    const srv = await serve(notify());
    try {
      await hammer(`${srv.url}/notify/open/${send.token}`, N);
    } finally {
      await srv.close();
    }
    await notify().flush();
    await assertOneFirstOpen(send);
  });

  test(`${N} pixel requests, then SIGTERM right after the last response: nothing buffered is lost`, async () => {
    const send = await insertSend(notify(), { campaignId: await insertCampaign(notify().context.store) });
    const srv = await spawnServer([SERVE_CHILD], { CHILD_DATABASE: h.url });
    await hammer(`${srv.url}/notify/open/${send.token}`, N);
    srv.child.kill('SIGTERM');
    assert.equal(await srv.exited, 0);
    await assertOneFirstOpen(send);
  });

  test('two server processes on one database, hammered with the same token, flushing as they go: one first open', async () => {
    const send = await insertSend(notify(), { campaignId: await insertCampaign(notify().context.store) });
    const env = { CHILD_DATABASE: h.url, CHILD_FLUSH_MS: '10' };
    const servers = await Promise.all([0, 1].map(() => spawnServer([SERVE_CHILD], env)));
    const each = 1500;
    await Promise.all(servers.map((s) => hammer(`${s.url}/notify/open/${send.token}`, each, 50)));
    for (const s of servers) s.child.kill('SIGTERM');
    assert.deepEqual(await Promise.all(servers.map((s) => s.exited)), [0, 0]);
    await assertOneFirstOpen(send, 2 * each);
  });

  test('`notify serve --port 0` serves the controller and writes buffered events on SIGTERM', async () => {
    const send = await insertSend(notify());
    const srv = await spawnServer([cliEntry(), 'serve', '--port', '0', '--host', '127.0.0.1'], { NOTIFY_DATABASE: h.url, NOTIFY_LOG_LEVEL: 'silent' });
    await hammer(`${srv.url}/notify/open/${send.token}`, 200, 20);
    srv.child.kill('SIGTERM');
    assert.equal(await srv.exited, 0);
    assert.equal(await countOpens(send.id), 200);
  });
});
