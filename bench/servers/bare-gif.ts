import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ready } from '../lib/child.ts';
import { GIF, GIF_HEADERS } from '../lib/gif.ts';

/** Baseline: the least a pixel endpoint can do: a bare node:http server answering every request with the GIF. */
const server = createServer((_req, res) => {
  res.writeHead(200, GIF_HEADERS);
  res.end(GIF);
});
server.listen(0, '127.0.0.1', () => ready({ port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
