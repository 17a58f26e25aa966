import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { createStore } from '../src/store/index.ts';
import { LOAD_CORE, pinSelf } from './lib/cores.ts';
import { benchDatabase, postgresAvailable } from './lib/db.ts';
import { startGuard } from './lib/guard.ts';
import { sized } from './lib/options.ts';
import { count, fmt, info, report, skip } from './lib/report.ts';
import { startRemoteSink } from './lib/sink.ts';
import { type MemorySample, startSendWorker } from './lib/workers.ts';

/**
 * A 100,000-contact campaign on PostgreSQL to the SMTP sink, as one notify:send-campaign run
 * (`npm run bench -- scale`; minutes, so not in the default set):
 *   send rate over the last 10% of messages  vs  over the first 10%       target >= 0.9
 *   peak RSS of the sending process, sampled every 200 ms through the run  target < 200 MB
 * The rates come from the sink's arrival times. The sender runs as compiled JavaScript (no tsx
 * loader in its memory), as an installed notify does. The worker is warmed on a small campaign of its
 * own first, so the first 10% is not slowed by JIT warm-up (which would flatter the ratio).
 */
const CONTACTS = Number(process.env.BENCH_SCALE_CONTACTS) || sized(100_000, 1000);

/** n contacts in list `list` in three statements (the API would take minutes, and under load its parallel upserts wait out the pool's connection timeout). */
async function seed(url: string, n: number, list: string): Promise<void> {
  const store = createStore(url);
  try {
    await store.migrate();
    const now = Date.now();
    await sql`insert into notify_contacts (email, email_key, name, status, unsubscribe_token, attributes, created_at, updated_at)
      select ${list} || n || '@example.com', ${list} || n || '@example.com', 'Reader ' || n, 'subscribed', md5('u' || n || random()), '{}', ${now}, ${now}
      from generate_series(1, ${n}) as g(n)`.execute(store.db);
    await sql`insert into notify_lists (name, created_at) values (${list}, ${now})`.execute(store.db);
    await sql`insert into notify_list_members (list_id, contact_id, created_at)
      select l.id, c.id, ${now} from notify_contacts c, notify_lists l where l.name = ${list} and c.email like ${`${list}%`}`.execute(store.db);
    await sql`analyze`.execute(store.db);
  } finally {
    await store.close();
  }
}

const rssMB = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/**
 * The server's `autovacuum` setting: with it off (some test servers), the dead row versions a run leaves
 * behind are never cleaned while it goes, and the last 10% slows for that reason (measured 2026-11-25:
 * 0.21 with it off, 0.82 with it on, same code); a deployment runs with it on, so the figure says which.
 */
async function autovacuum(url: string): Promise<string> {
  const store = createStore(url);
  try {
    const { rows } = await sql<{ autovacuum: string }>`show autovacuum`.execute(store.db);
    return rows[0]?.autovacuum ?? 'unknown';
  } finally {
    await store.close();
  }
}

/**
 * Flat means the run's memory is bounded by its chunks, not by how many it sent: the mean RSS over
 * the run's last tenth against its first (the samples are 200 ms apart, so a tenth is one by time).
 * The GC's sawtooth shows in the peak, a leak in the last tenth.
 */
function flatness(samples: number[]): string {
  const tenth = Math.max(1, Math.floor(samples.length / 10));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const [first, last] = [mean(samples.slice(0, tenth)), mean(samples.slice(-tenth))];
  return `mean over the first 10% of the run ${first.toFixed(0)} MB, over the last 10% ${last.toFixed(0)} MB (${last >= first ? '+' : ''}${(last - first).toFixed(1)} MB)`;
}

/**
 * process.memoryUsage() of the sender, first tenth against last tenth of the run and the peak of each
 * field: heapTotal is V8's reserved heap (old-space garbage between mark-compacts shows there),
 * external and arrayBuffers the Buffers (socket writes, pg's reads) outside it.
 */
function breakdown(samples: MemorySample[]): string {
  const fields = ['heapTotal', 'heapUsed', 'external', 'arrayBuffers'] as const;
  const tenth = Math.max(1, Math.floor(samples.length / 10));
  const mean = (xs: MemorySample[], f: (typeof fields)[number]) => xs.reduce((a, x) => a + x[f], 0) / xs.length;
  return fields
    .map((f) => `${f} ${mean(samples.slice(0, tenth), f).toFixed(0)} -> ${mean(samples.slice(-tenth), f).toFixed(0)} MB (peak ${Math.max(...samples.map((x) => x[f])).toFixed(0)})`)
    .join(', ');
}

/** Messages per second over the arrival times from index a to b. */
const rate = (times: number[], a: number, b: number) => (b - a) / (Math.max(1, times[b] - times[a]) / 1000);

if (!(await postgresAvailable())) skip('scale campaign [postgres]', 'PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL');
else {
  pinSelf(LOAD_CORE);
  const db = benchDatabase('postgres');
  const sink = await startRemoteSink();
  try {
    const seeded = performance.now();
    await seed(db.url, sized(1000, 50), 'warm');
    await seed(db.url, CONTACTS, 'scale');
    info('seeded', `${count(CONTACTS)} contacts in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
    const vacuum = await autovacuum(db.url);
    info('server', `autovacuum ${vacuum}${vacuum === 'off' ? ' (dead rows are not cleaned during the run: a deployment runs it on)' : ''}`);
    const worker = await startSendWorker(sink.url, db.url, true);
    try {
      await worker.campaign('warm');
      await sink.reset();
      const pid = worker.child.proc.pid!;
      const startRss = rssMB(pid);
      const samples: number[] = [];
      const sampler = setInterval(() => samples.push(rssMB(pid)), 200);
      const guard = await startGuard();
      const run = await worker.campaign('scale', { memory: true }).finally(() => clearInterval(sampler));
      const checked = guard.finish();
      const stats = await sink.waitFor(CONTACTS);
      if (run.sent !== CONTACTS || stats.duplicates > 0) throw new Error(`sent ${run.sent} of ${CONTACTS}; ${stats.duplicates} duplicates in the sink`);
      const maxRss = Math.max(startRss, ...samples);
      const times = (await sink.times()).sort((a, b) => a - b);
      const tenth = Math.floor(times.length / 10);
      const first = rate(times, 0, tenth);
      const last = rate(times, times.length - 1 - tenth, times.length - 1);
      info('whole run', `${count(CONTACTS)} messages in ${(run.ms / 1000).toFixed(1)} s (${fmt(CONTACTS / (run.ms / 1000))} msg/s), ${fmt(run.cpuMs / 1000)} s of CPU in the sender`);
      const name = (what: string) => `scale ${count(CONTACTS)}-contact campaign, ${what} [postgres]`;
      report({ name: name('rate over the last 10%'), value: last, unit: 'msg/s', baselineName: 'first 10%', baseline: first, target: { on: 'ratio', op: '>=', limit: 0.9 }, note: `autovacuum ${vacuum}` }, checked);
      info('RSS', flatness(samples));
      if (run.memory?.length) info('memory', `first 10% -> last 10% of the run: ${breakdown(run.memory)}`);
      report({ name: name('peak RSS'), value: maxRss, unit: 'MB', baselineName: 'RSS before the run', baseline: startRss, target: { on: 'value', op: '<', limit: 200 }, note: 'sampled every 200 ms' }, checked);
    } finally {
      await worker.stop();
    }
  } finally {
    await sink.stop();
    await db.drop();
  }
}
