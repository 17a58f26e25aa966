import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { BENCH_SECRET, countEvents, seedSends } from '../../bench/lib/seed.ts';
import { freshPgSchema, NO_PG, viaPort } from './helpers/pg.ts';
import { CliEnv, type CliRun, waitUntil } from './helpers/processes.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * `notify serve` as a real process on the real PostgreSQL, under pixel load from this process.
 * Whatever happens (SIGTERM mid-load, the database going away and coming back), the stored opens
 * must equal the 200 answers the clients received: none lost, none doubled.
 */
describe('notify serve under pixel load', { skip: NO_PG, timeout: 120_000 }, () => {
  let db: ReturnType<typeof freshPgSchema>;
  const cleanups: (() => unknown)[] = [];
  beforeEach(() => {
    db = freshPgSchema();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await db.drop();
  });

  async function serve(database: string): Promise<{ run: CliRun; origin: string }> {
    const cli = new CliEnv({ database, secret: BENCH_SECRET, baseUrl: 'http://127.0.0.1' });
    cleanups.push(() => cli.cleanup());
    const run = cli.start(['serve', '--port', '0', '--host', '127.0.0.1']);
    cleanups.push(() => run.proc.exitCode === null && run.proc.kill('SIGKILL'));
    const origin = await waitUntil(
      () => {
        if (run.proc.exitCode !== null) throw new Error(`serve exited ${run.proc.exitCode}: ${run.stderr()}`);
        return run.stdout().match(/listening on (http:\/\/[^\s]+)/)?.[1];
      },
      30_000,
      'notify serve to listen',
    );
    return { run, origin };
  }

  /** 16 keep-alive clients requesting opens until stopped or refused; counts the 200 GIFs received */
  function pixelLoad(origin: string, tokens: string[]) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const counts = { ok: 0, other: 0, refused: 0 };
    let stop = false;
    const get = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.get(origin + path, { agent }, (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => {
            bytes += c.length;
          });
          res.on('end', () => resolve(res.statusCode === 200 && bytes === 43 ? 200 : (res.statusCode ?? 0)));
          res.on('error', reject);
        });
        req.on('error', reject);
      });
    const loop = async (i: number) => {
      for (let n = i; !stop; n += 16) {
        try {
          (await get(`/notify/open/${tokens[n % tokens.length]}`)) === 200 ? counts.ok++ : counts.other++;
        } catch {
          counts.refused++;
          return; // refused or reset once the server stops listening: that request was not answered
        }
      }
    };
    const loops = Array.from({ length: 16 }, (_, i) => loop(i));
    return {
      counts,
      reached: (n: number, what: string) => waitUntil(() => (counts.ok >= n ? true : undefined), 30_000, what),
      async stop() {
        stop = true;
        await Promise.all(loops);
        agent.destroy();
      },
    };
  }

  test('SIGTERM mid-load: stored open events equal the 200 responses given', async (t) => {
    const { tokens } = await seedSends(db.url, 500);
    const s = await serve(db.url);
    const loadGen = pixelLoad(s.origin, tokens);
    await loadGen.reached(3000, '3000 answered opens');
    s.run.proc.kill('SIGTERM');
    const code = await s.run.exited;
    await loadGen.stop();
    assert.equal(code, 0, `serve exit code (stderr: ${s.run.stderr()})`);
    assert.equal(loadGen.counts.other, 0, 'every answer was the 200 GIF');
    assert.equal(await countEvents(db.url, 'open'), loadGen.counts.ok, 'stored opens = 200 responses given');
    t.diagnostic(`${loadGen.counts.ok} opens answered and stored`);
  });

  test('PostgreSQL lost for 2 s under load: the pixel keeps answering, nothing is lost or doubled after it returns', async (t) => {
    const { tokens } = await seedSends(db.url, 500);
    const target = new URL(db.url);
    const proxy: TcpProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const s = await serve(viaPort(db.url, proxy.port));
    const loadGen = pixelLoad(s.origin, tokens);
    await loadGen.reached(2000, '2000 answered opens');
    await proxy.cut();
    const atCut = loadGen.counts.ok;
    await new Promise((r) => setTimeout(r, 2000));
    const duringOutage = loadGen.counts.ok - atCut;
    await proxy.restore();
    assert.equal(s.run.proc.exitCode, null, `serve survived the outage (stderr: ${s.run.stderr().slice(0, 1000)})`);
    await loadGen.reached(loadGen.counts.ok + 2000, '2000 more answered opens after the database returned');
    s.run.proc.kill('SIGTERM');
    const code = await s.run.exited;
    await loadGen.stop();
    t.diagnostic(`${duringOutage} opens answered while the database was away; ${loadGen.counts.ok} in all`);
    assert.equal(code, 0, `serve exit code (stderr: ${s.run.stderr()})`);
    assert.ok(duringOutage > 100, `the pixel kept answering while the database was away (${duringOutage})`);
    assert.equal(loadGen.counts.other, 0, 'every answer was the 200 GIF');
    assert.equal(await countEvents(db.url, 'open'), loadGen.counts.ok, 'stored opens = 200 responses given');
    assert.match(s.run.stdout() + s.run.stderr(), /database unreachable|will retry/i, 'the outage was logged clearly');
  });
});
