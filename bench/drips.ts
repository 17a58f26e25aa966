import { newToken } from '../src/core/tokens.ts';
import { createNotify } from '../src/notify.ts';
import { type Child, startChild } from './lib/child.ts';
import { benchDatabase, postgresAvailable } from './lib/db.ts';
import { fmt, info, report, skip } from './lib/report.ts';
import { startRemoteSink } from './lib/sink.ts';

/**
 * notify:process-drips, 4 worker processes vs 1, on PostgreSQL: goal >= 2x, zero duplicates.
 * Each round seeds N due enrollments of a one-step sequence in a fresh schema, starts the workers
 * (each its own process, started and JIT-warmed on 400 sends of its own before the clock starts, so
 * four cold processes are not compared with one), and times until the last one finds nothing due. The sink (its own process) counts messages and duplicate recipients. Rounds alternate 1 and
 * 4 workers; the medians are compared.
 */
const N = Number(process.env.NOTIFY_BENCH_DRIPS ?? 3000);
const ROUNDS = 2;
const HTML = '<h1>Hello {{ contact.name }}</h1><p>A welcome step with <a href="https://example.com/a">a link</a> and <a href="https://example.com/b">another</a>.</p>';

if (!(await postgresAvailable())) {
  skip('process-drips 4 workers vs 1 [postgres]', 'PostgreSQL is not reachable');
} else {
  const sink = await startRemoteSink();
  try {
    const rates: Record<number, number[]> = { 1: [], 4: [] };
    let duplicates = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const workers of [1, 4]) {
        const { rate, dupes } = await measure(workers, sink);
        rates[workers].push(rate);
        duplicates += dupes;
        info(`round ${round + 1}, ${workers} worker${workers > 1 ? 's' : ''}`, `${fmt(rate)} msg/s`);
      }
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1];
    report({
      name: 'process-drips 4 workers [postgres]',
      figure: median(rates[4]),
      unit: 'msg/s',
      baselineName: '1 worker',
      baseline: median(rates[1]),
      kind: 'rate',
      goal: { on: 'ratio', min: 2 },
      note: `${N.toLocaleString('en-US')} enrollments per round, ${duplicates} duplicates`,
    });
    if (duplicates > 0) process.exitCode = 1;
  } finally {
    await sink.stop();
  }
}

async function measure(workers: number, sink: Awaited<ReturnType<typeof startRemoteSink>>): Promise<{ rate: number; dupes: number }> {
  const db = benchDatabase('postgres');
  try {
    await seed(db.url, N);
    const url = `${db.url}&max=4`;
    const children: Child<Record<string, unknown>>[] = await Promise.all(Array.from({ length: workers }, () => startChild(new URL('./servers/drip-worker.ts', import.meta.url), [url, sink.url, HTML], {}, 120_000)));
    await sink.reset(); // the workers' warm-up messages
    const started = performance.now();
    for (const c of children) c.proc.kill('SIGUSR2');
    const results = (await Promise.all(children.map((c) => c.done()))) as { sent: number }[];
    const seconds = (performance.now() - started) / 1000;
    const sent = results.reduce((n, r) => n + (r?.sent ?? 0), 0);
    const stats = await sink.waitFor(N);
    if (sent !== N || stats.messages !== N) throw new Error(`${workers} workers sent ${sent}, the sink has ${stats.messages}, expected ${N}`);
    return { rate: N / seconds, dupes: stats.duplicates };
  } finally {
    await db.drop();
  }
}

async function seed(url: string, n: number): Promise<void> {
  const notify = await createNotify({ database: url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com' });
  try {
    const seq = await notify.drips.createSequence({ name: 'bench', steps: [{ delayMinutes: 0, subject: 'Welcome {{ contact.name }}', html: HTML }] });
    const { db } = notify.context.store;
    const now = Date.now();
    for (let i = 0; i < n; i += 500) {
      const ids = await db
        .insertInto('notify_contacts')
        .values(Array.from({ length: Math.min(500, n - i) }, (_, j) => ({ email: `drip${i + j}@example.com`, email_key: `drip${i + j}@example.com`, name: `D${i + j}`, status: 'subscribed', unsubscribe_token: newToken(), attributes: '{}', created_at: now, updated_at: now })))
        .returning('id')
        .execute();
      await db
        .insertInto('notify_enrollments')
        .values(ids.map((r) => ({ sequence_id: seq.id, contact_id: Number(r.id), status: 'active', step_index: 0, next_send_at: now - 1000, attempts: 0, created_at: now, updated_at: now })))
        .execute();
    }
  } finally {
    await notify.close();
  }
}
