import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** how many connections were made through the proxy */
  readonly connections: number;
  /** bytes the target sent back through the proxy */
  readonly bytesFromTarget: number;
  /** the database "goes away": open connections are reset and new ones refused (ECONNREFUSED) */
  cut(): Promise<void>;
  /**
   * The next time a client sends `text`, it is forwarded and that connection is then closed: the
   * server still reads the message (a FIN after it), but its reply never reaches the client, as
   * when a network drops between a COMMIT and its answer. Resolves when that happened.
   */
  dropReplyAfter(text: string): Promise<void>;
  /** the database is back on the same port */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy between notify and the shared PostgreSQL server, so a test can take "the
 * database" away from its own processes only (the real server keeps serving everyone else).
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  let bytesFromTarget = 0;
  let server: net.Server;
  let port = 0;
  let dropAfter: { text: Buffer; done: () => void } | null = null;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        connections++;
        const upstream = net.connect(target);
        upstream.on('data', (chunk: Buffer) => {
          bytesFromTarget += chunk.length;
        });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
        // after pipe's own listener: the chunk is already on its way to the server
        client.on('data', (chunk: Buffer) => {
          if (!dropAfter || !chunk.includes(dropAfter.text)) return;
          const { done } = dropAfter;
          dropAfter = null;
          upstream.unpipe(client);
          upstream.end();
          upstream.on('data', () => {});
          client.destroy();
          done();
        });
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });

  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) {
        // Node 20 spins forever in resetAndDestroy() on a half-closed socket (the peer already
        // ended, as an IMAP server does after LOGOUT): only a fully open one gets the reset.
        if (s.readyState === 'open') s.resetAndDestroy();
        else s.destroy();
      }
    });

  await listen();
  return {
    get port() {
      return port;
    },
    get connections() {
      return connections;
    },
    get bytesFromTarget() {
      return bytesFromTarget;
    },
    dropReplyAfter: (text) =>
      new Promise<void>((resolve) => {
        dropAfter = { text: Buffer.from(text), done: resolve };
      }),
    cut: stop,
    restore: listen,
    close: stop,
  };
}
