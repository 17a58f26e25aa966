import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNotify } from '../../src/notify.ts';
import { done, ready } from '../lib/child.ts';
import { BENCH_SECRET } from '../lib/seed.ts';

/**
 * notify's controller on node:http, as an application mounts it. Counts the answers it gives by
 * status, so the parent can check that every 200 was recorded. On SIGTERM it stops accepting,
 * closes notify (which flushes what the recorder holds) and reports.
 * Usage: notify.ts <database url> [<webhooksOut as JSON>]
 */
const notify = await createNotify({
  database: process.argv[2],
  configFile: false,
  env: {},
  logLevel: 'silent',
  mailer: 'log',
  baseUrl: 'http://127.0.0.1',
  secret: BENCH_SECRET,
  fromEmail: 'news@example.com',
  ...(process.argv[3] ? { webhooksOut: process.argv[3] } : {}),
});
const answered: Record<number, number> = {};
const count = (status: number) => {
  answered[status] = (answered[status] ?? 0) + 1;
};
const server = createServer((req, res) => {
  notify.listener(req, res);
  // The fast path answers before the listener returns: counted at once, so the bare baseline is
  // not compared with a server that also adds a listener to every response.
  if (res.writableEnded) count(res.statusCode);
  else res.on('finish', () => count(res.statusCode));
});
server.listen(0, '127.0.0.1', () => ready({ port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => {
  server.close(async () => {
    await notify.close();
    done({ answered });
    process.exit(0);
  });
  server.closeIdleConnections();
});
