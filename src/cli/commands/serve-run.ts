import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { NotifyError } from '../../errors.ts';
import { createNotify, type Notify } from '../../notify.ts';
import { configSources } from '../config-sources.ts';
import { announceListening, parseWorkers, runPrimary } from './serve-workers.ts';

export interface ServeOptions {
  port: number;
  host: string;
  /** how long in-flight requests get to finish on SIGTERM before their sockets are closed */
  graceMs?: number;
  log?: (line: string) => void;
  /** called after a stop (instead of logging `notify: stopped`) with the number of requests this process received */
  stopped?: (requests: number) => void;
}

/**
 * Serves the /notify/* controller on node:http (given an instance, or a factory called with the
 * server's URL once it listens). On SIGTERM or SIGINT it stops accepting, lets
 * in-flight requests finish (up to graceMs), then closes the instance, which writes every
 * buffered open and click event, and exits 0.
 */
export async function startServer(
  instance: Notify | ((url: string) => Promise<Notify>),
  opts: ServeOptions,
): Promise<{ server: Server; url: string; notify: Notify; stop: () => Promise<void> }> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const { server, url } = await bind(opts.port, opts.host);
  // A factory builds the instance once the address is known (its links must point here); the
  // socket is bound first so a busy port fails before any work is done.
  let notify: Notify;
  try {
    notify = typeof instance === 'function' ? await instance(url) : instance;
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  }
  let requests = 0;
  const listener = notify.listener;
  server.on(
    'request',
    opts.stopped
      ? (req, res) => {
          requests++;
          listener(req, res);
        }
      : listener,
  );
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await closeGracefully(server, opts.graceMs ?? 5_000);
      await notify.close();
      if (opts.stopped) opts.stopped(requests);
      else log('notify: stopped');
    })());
  stopOnSignals(stop, log);
  log(`notify: listening on ${url} (routes under /notify/)`);
  return { server, url, notify, stop };
}

/** A server listening on port and host, and its URL; a busy port is a clear error. */
async function bind(port: number, host: string): Promise<{ server: Server; url: string }> {
  const server = createServer();
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new NotifyError('INVALID_INPUT', `port ${port} is in use on ${host}; pass --port with another (0 picks a free one)`) : err),
    );
    server.listen(port, host, () => resolve());
  });
  const { address, port: bound } = server.address() as AddressInfo;
  return { server, url: `http://${address.includes(':') ? `[${address}]` : address}:${bound}` };
}

/** Stops accepting, lets in-flight requests finish for up to graceMs, then closes their sockets. */
async function closeGracefully(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(force);
}

/** SIGTERM or SIGINT: stop, then exit 0 (1 when the stop failed). */
function stopOnSignals(stop: () => Promise<void>, log: (line: string) => void): void {
  const onSignal = (signal: NodeJS.Signals) => {
    log(`notify: ${signal} received, finishing requests and writing buffered events`);
    stop().then(
      () => process.exit(0),
      (err) => {
        console.error(`notify: shutdown failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

export async function runServe(opts: { port: string; host: string; workers: string }, cmd: Command): Promise<void> {
  const port = Number(opts.port);
  if (!/^\d+$/.test(opts.port) || port > 65535) throw new NotifyError('INVALID_INPUT', `--port must be a number from 0 to 65535 (got ${JSON.stringify(opts.port)})`);
  const workers = parseWorkers(opts.workers);
  if (cluster.isWorker) return serveWorker(cmd, port, opts.host);
  const notify = await createNotify(configSources(cmd));
  if (workers > 1) {
    // The primary checks the configuration and migrates once, then only supervises.
    const memory = notify.config.database === 'sqlite::memory:';
    const adminToken = !!notify.config.adminToken;
    await notify.close();
    if (memory) throw new NotifyError('INVALID_INPUT', '--workers needs a database every worker process opens; sqlite::memory: is private to one process');
    process.exitCode = await runPrimary({
      workers,
      onListening: (url) => {
        console.log(`notify: listening on ${url} (routes under /notify/), ${workers} worker processes`);
        if (adminToken) printAdminLink(opts.host, url);
      },
    });
    return;
  }
  try {
    const { url } = await startServer(notify, { port, host: opts.host });
    if (notify.config.adminToken) printAdminLink(opts.host, url);
  } catch (err) {
    await notify.close();
    throw err;
  }
}

/** One worker of `serve --workers`: a plain server whose lines name its process; the primary prints the URL. */
async function serveWorker(cmd: Command, port: number, host: string): Promise<void> {
  const tag = `notify[worker ${process.pid}]`;
  const notify = await createNotify(configSources(cmd));
  try {
    const { url } = await startServer(notify, {
      port,
      host,
      log: (line) => {
        if (!line.startsWith('notify: listening')) console.log(line.replace(/^notify:/, `${tag}:`));
      },
      stopped: (requests) => console.log(`${tag}: stopped after ${requests} requests`),
    });
    announceListening(url);
  } catch (err) {
    await notify.close();
    throw err;
  }
}

// the token itself stays out of logs: whoever runs the server has it in their configuration
function printAdminLink(host: string, url: string): void {
  console.log(`notify: admin pages at ${linkBase(host, Number(new URL(url).port))}/notify/admin (sign in with the adminToken)`);
}

/** Links printed for a browser on this machine use a name it reaches, whatever address is bound. */
export function linkBase(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}
