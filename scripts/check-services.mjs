// Fails (exit 1) when CI asked for PostgreSQL or Redis and the server does not answer.
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

let failed = false;
for (const [name, url, check] of [
  ['PostgreSQL', process.env.NOTIFY_TEST_PG_URL, checkPg],
  ['Redis', process.env.NOTIFY_TEST_REDIS_URL, checkRedis],
]) {
  if (!url) continue;
  try {
    await check(url);
    console.log(`${name} answers at ${url}`);
  } catch (err) {
    failed = true;
    console.error(`${name} at ${url} does not answer: ${err.message}`);
  }
}
process.exit(failed ? 1 : 0);
