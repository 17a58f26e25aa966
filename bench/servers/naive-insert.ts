import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createStore } from '../../src/store/index.ts';
import { done, ready } from '../lib/child.ts';
import { GIF, GIF_HEADERS } from '../lib/gif.ts';

/**
 * The design the recorder must beat by 3x: one awaited INSERT per request before answering.
 * The single statement also finds the send by its token (INSERT ... SELECT), so it records the
 * same row the real endpoint does. Usage: naive-insert.ts <database url>
 */
const store = createStore(process.argv[2]);
const { db } = store;
let answered = 0;

const server = createServer(async (req, res) => {
  const token = (req.url ?? '').split('?')[0].split('/').pop() ?? '';
  try {
    await sql`insert into notify_events (type, send_id, contact_id, campaign_id, metadata, is_machine, created_at)
      select 'open', id, contact_id, campaign_id, '{}', 0, ${Date.now()} from notify_sends where token = ${token}`.execute(db);
  } catch {
    // the pixel answers whatever happens to the database
  }
  answered++;
  res.writeHead(200, GIF_HEADERS);
  res.end(GIF);
});
server.listen(0, '127.0.0.1', () => ready({ port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => {
  server.close(async () => {
    await store.close();
    done({ answered });
    process.exit(0);
  });
  server.closeAllConnections();
});
