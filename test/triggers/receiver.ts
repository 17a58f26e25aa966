import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
  body: string;
  signature: string;
}

/**
 * A webhook receiver on a real loopback port. `answer` decides each reply (default 204); `down`
 * closes the listening socket so connections are refused, `up` opens it again on the same port.
 */
export async function startReceiver(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void = (_q, res) => void res.writeHead(204).end()) {
  const received: Received[] = [];
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const parsed = JSON.parse(body);
    received.push({ ...parsed, body, signature: String(req.headers['notify-signature'] ?? '') });
    receiver.answer(req, res, body);
  };
  let server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answer,
    async down() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
    async up() {
      server = createServer(handler);
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    },
    async close() {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return receiver;
}
