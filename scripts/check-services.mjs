// Fails (exit 1) when CI asked for PostgreSQL, Redis or a browser and it does not answer or is not there.
import { accessSync, constants, statSync } from 'node:fs';
import net from 'node:net';
import pg from 'pg';

async function checkPg(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  await client.query('select 1');
  await client.end();
}

function checkRedis(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: hostname, port: Number(port || 6379) });
    sock.setTimeout(5000, () => reject(new Error('timeout')));
    sock.on('error', reject);
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      sock.end();
      String(d).startsWith('+PONG') ? resolve() : reject(new Error(`unexpected reply ${d}`));
    });
  });
}

// The browser tests would fail later anyway; saying so here names the path before minutes of tests.
async function checkBrowser(path) {
  if (!statSync(path).isFile()) throw new Error('not a file');
  accessSync(path, constants.X_OK);
}

let failed = false;
for (const [name, where, check, missing] of [
  ['PostgreSQL', process.env.NOTIFY_TEST_PG_URL, checkPg, 'does not answer'],
  ['Redis', process.env.NOTIFY_TEST_REDIS_URL, checkRedis, 'does not answer'],
  ['Chromium', process.env.NOTIFY_TEST_CHROMIUM, checkBrowser, 'is not an executable file'],
]) {
  if (!where) continue;
  try {
    await check(where);
    console.log(`${name} ok: ${where}`);
  } catch (err) {
    failed = true;
    console.error(`${name} at ${where} ${missing}: ${err.message}`);
  }
}
process.exit(failed ? 1 : 0);
