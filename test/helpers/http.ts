import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Notify } from '../../src/notify.ts';

/** Calls the controller in-process (no socket: clientIp() is ''). */
export function call(notify: Notify, path: string, init?: RequestInit): Promise<Response> {
  return notify.fetch(new Request(`http://localhost:3000${path}`, init));
}

/** Serves notify.listener on a real loopback port, for tests that need sockets (client IP, adapters). */
export async function serve(notify: Notify): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(notify.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
