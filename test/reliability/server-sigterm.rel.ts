import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { BENCH_SECRET, countEvents, seedSends } from '../../bench/lib/seed.ts';
import { CliEnv, waitUntil } from './helpers/processes.ts';
import { freshPgSchema, NO_PG } from './helpers/pg.ts';

/**
 * `notify serve` under pixel load gets SIGTERM: it must stop accepting, finish what it took, write
 * every buffered event and exit 0, so the stored opens equal the 200 answers the clients received.
 */
describe('SIGTERM of notify serve under pixel load', { skip: NO_PG, timeout: 90_000 }, () => {
  let db: ReturnType<typeof freshPgSchema>;
  let cli: CliEnv;
  before(() => {
    db = freshPgSchema();
    cli = new CliEnv({ database: db.url, secret: BENCH_SECRET, baseUrl: 'http://127.0.0.1' });
  });
  after(async () => {
    cli.cleanup();
    await db.drop();
  });

  test('stored open events equal the 200 responses given', async (t) => {
    const { tokens } = await seedSends(db.url, 500);
    const server = cli.start(['serve', '--port', '0', '--host', '127.0.0.1']);
    const origin = await waitUntil(
      () => {
        if (/unknown command/.test(server.stderr())) return 'missing';
        if (server.proc.exitCode !== null) throw new Error(`serve exited ${server.proc.exitCode}: ${server.stderr()}`);
        return server.stdout().match(/listening on (http:\/\/[^\s]+)/)?.[1];
      },
      30_000,
      'notify serve to listen',
    );
    if (origin === 'missing') return t.skip('notify serve is not built in this checkout');

    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    let ok = 0;
    let other = 0;
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
          (await get(`/notify/open/${tokens[n % tokens.length]}`)) === 200 ? ok++ : other++;
        } catch {
          return; // refused or reset once the server stops listening: that request was not answered
        }
      }
    };
    const loops = Array.from({ length: 16 }, (_, i) => loop(i));
    await waitUntil(() => (ok > 2000 ? true : undefined), 30_000, '2000 answered opens');
    server.proc.kill('SIGTERM');
    const code = await server.exited;
    stop = true;
    await Promise.all(loops);
    agent.destroy();

    assert.equal(code, 0, `serve exit code (stderr: ${server.stderr()})`);
    assert.equal(other, 0, 'every answer was the 200 GIF');
    assert.equal(await countEvents(db.url, 'open'), ok, 'stored opens = 200 responses given');
    t.diagnostic(`${ok} opens answered and stored`);
  });
});
