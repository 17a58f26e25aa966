import autocannon from 'autocannon';

export interface LoadOptions {
  /** http://127.0.0.1:<port> (loopback only) */
  origin: string;
  /** request paths; each connection walks its own rotation of them */
  paths: string[];
  seconds: number;
  connections?: number;
  headers?: Record<string, string>;
}

export interface LoadResult {
  /** answered requests per second (any status) */
  rps: number;
  total: number;
  /** answers by status code */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

/**
 * Bounded HTTP load with autocannon (loopback only). The server under test runs in another
 * process (bench/lib/child.ts) so it does not share this event loop.
 */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  const url = new URL(opts.origin);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error(`load() only targets loopback, not ${url.hostname}`);
  const connections = opts.connections ?? 32;
  let next = 0;
  const result = await autocannon({
    url: opts.origin,
    connections,
    duration: opts.seconds,
    headers: opts.headers,
    // Each connection starts at a different point of the path list, so tokens spread over connections.
    setupClient: (client) => {
      const start = (next++ * 7919) % opts.paths.length;
      const mine = opts.paths.slice(start).concat(opts.paths.slice(0, start)).slice(0, 256);
      client.setRequests(mine.map((path) => ({ method: 'GET', path })));
    },
  });
  const statuses: Record<string, number> = {};
  for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = Number(v.count);
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  return { rps: total / result.duration, total, statuses, errors: result.errors, timeouts: result.timeouts };
}
