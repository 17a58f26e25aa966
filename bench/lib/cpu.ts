import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import pg from 'pg';

/**
 * CPU time of a server under load and of the PostgreSQL backends serving it, which the load of a
 * shared machine distorts far less than the requests per second it gets (Linux /proc only; elsewhere
 * every reading is 0 and the figure is left out).
 */

const TICK_US = 10_000; // USER_HZ is 100 on every Linux kernel built for x86 and arm

/** user + system CPU of a process in µs; 0 once it is gone (or without /proc) */
export function cpuMicros(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return 0;
  }
}

/** The local ports of the process's TCP connections to `port` (its pool's connections to the database). */
function connectionPorts(pid: number, port: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSafe(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    }
  } catch {
    return [];
  }
  const remote = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 9 && c[2].endsWith(remote) && inodes.has(c[9])) ports.push(Number.parseInt(c[1].split(':').pop()!, 16));
    }
  }
  return ports;
}

function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

/** The PostgreSQL backends (server process ids) of the connections `pid` holds to the server at `url`. */
export async function backendsOf(pid: number, url: string): Promise<number[]> {
  const parsed = new URL(url);
  const ports = connectionPorts(pid, Number(parsed.port || 5432));
  if (ports.length === 0) return [];
  parsed.search = '';
  const client = new pg.Client({ connectionString: parsed.toString() });
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where client_port = any($1::int[])', [ports]);
    return rows.map((r) => Number(r.pid));
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The CPU a server process (and, with `postgresUrl`, its backends) spends while `work` runs. Backends
 * found only afterwards (connections opened during the work) count whole: they started during it.
 */
export async function measureCpu<T>(pid: number, postgresUrl: string | undefined, work: () => Promise<T>): Promise<{ result: T; serverUs: number; databaseUs?: number }> {
  const backends = postgresUrl ? await backendsOf(pid, postgresUrl) : [];
  const before = new Map([pid, ...backends].map((p) => [p, cpuMicros(p)]));
  const result = await work();
  // the flush of what the server still held
  await new Promise((r) => setTimeout(r, 250));
  const serverUs = cpuMicros(pid) - before.get(pid)!;
  if (!postgresUrl) return { result, serverUs };
  const after = new Set([...backends, ...(await backendsOf(pid, postgresUrl))]);
  let databaseUs = 0;
  for (const p of after) {
    const now = cpuMicros(p);
    // a connection closed meanwhile: what it spent is unknown, not negative
    if (now > 0) databaseUs += now - (before.get(p) ?? 0);
  }
  return { result, serverUs, databaseUs };
}
