import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createNotify } from '../src/notify.ts';
import { SUBJECT_CORE, pinSelf } from './lib/cores.ts';
import { benchEmailHtml } from './lib/email.ts';
import { FROM, pooledTransport, prebuild, recipients, timeSends } from './lib/nodemailer-baseline.ts';
import { startRemoteSink } from './lib/sink.ts';
import { measureCpu } from './lib/cpu.ts';
import { describeWallTime, watchWallTime } from './lib/wall-time.ts';
import { BACKEND_STATS_OPTIONS, collectBackendStats, type StatementCpu } from './lib/backend-stats.ts';

/**
 * What a campaign send costs per message in the figures load does not distort: statements and
 * commits per message (counted where the drivers run them) and the sender's CPU time per message,
 * for one campaign run in this process to the bench's SMTP sink (its own process). Not part of
 * `npm run bench`: a tool for comparing two versions of the send loop.
 *   npx tsx bench/dispatch-count.ts [sqlite|postgres] [recipients=1000] [rounds=3] [--profile <file>]
 * Prints, per round, messages per commit, statements per message, CPU us per message, and the
 * statements by text (the most frequent first); --profile writes a .cpuprofile of the last round.
 * --backend-stats (PostgreSQL) prints the backends' CPU per statement, as they measure it themselves.
 * --drips counts notify:process-drips instead: a one-step sequence of the same email, every
 * contact enrolled before the count starts.
 */
const args = process.argv.slice(2);
const dripsAt = args.indexOf('--drips');
const drips = dripsAt >= 0 && args.splice(dripsAt, 1).length > 0;
const profileAt = args.indexOf('--profile');
const profileFile = profileAt >= 0 ? args.splice(profileAt, 2)[1] : undefined;
const statsAt = args.indexOf('--backend-stats');
const backendStats = statsAt >= 0 && args.splice(statsAt, 1).length > 0 ? collectBackendStats() : undefined;
const [engine = 'sqlite', n = '1000', roundsArg = '3'] = args;
const unknown = args.filter((a) => a.startsWith('-'));
if (unknown.length > 0) {
  console.error(`unknown ${unknown.join(', ')}; options: --drips, --profile <file>, --backend-stats`);
  process.exit(2);
}
if (backendStats && engine !== 'postgres') {
  console.error('--backend-stats reads PostgreSQL backends: run it with postgres');
  process.exit(2);
}
const RECIPIENTS = Number(n);
const ROUNDS = Number(roundsArg);

const counts = new Map<string, number>();
/** CPU time inside the driver's call per statement text, in us (SQLite only: its calls are synchronous) */
const times = new Map<string, number>();
const count = (text: string) => counts.set(text, (counts.get(text) ?? 0) + 1);
countStatements();

pinSelf(SUBJECT_CORE);
const sink = await startRemoteSink();
const dir = mkdtempSync(join(tmpdir(), 'notify-dispatch-count-'));
const pgUrl = process.env.NOTIFY_BENCH_PG_URL ?? process.env.NOTIFY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const sessionOptions = backendStats ? `&options=${encodeURIComponent(BACKEND_STATS_OPTIONS)}` : '';
const database = engine === 'postgres' ? `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=dispatch_count_${process.pid}${sessionOptions}` : `sqlite:${join(dir, 'notify.db')}`;
const notify = await createNotify({ database, mailer: sink.url, configFile: false, envFile: false, env: {}, logLevel: 'warn', fromEmail: 'news@example.com', baseUrl: 'https://news.example.com', batchSize: 1_000_000 });
try {
  const html = benchEmailHtml();
  for (let i = 0; i < RECIPIENTS; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, RECIPIENTS - i) }, (_, j) => notify.contacts.upsert({ email: `reader${i + j}@example.com`, name: 'Reader' })));
  }
  // warm-up: JIT and the pool's connections (not counted)
  await notify.campaigns.send((await notify.campaigns.create({ subject: 'Warm-up', html })).id);
  const session = profileFile ? new Session() : undefined;
  const wall = watchWallTime(notify);
  const raw = pooledTransport(sink.url);
  await rawCpu(raw, html);
  for (let r = 0; r < ROUNDS; r++) {
    const rawUs = await rawCpu(raw, html);
    const { id } = await notify.campaigns.create({ subject: 'This week', html });
    if (drips) {
      await notify.drips.createSequence({ name: `count-${r}`, steps: [{ delayMinutes: 0, subject: 'This week', html }] });
      for (let i = 0; i < RECIPIENTS; i++) await notify.drips.enroll({ contact: `reader${i}@example.com`, sequence: `count-${r}` });
    }
    await sink.reset();
    counts.clear();
    times.clear();
    backendStats?.take();
    const last = r === ROUNDS - 1;
    if (session && last) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 50 });
      await session.post('Profiler.start');
    }
    wall.take();
    // with the CPU of the PostgreSQL backends serving this process (unpinned: wherever the kernel puts them)
    const measured = await measureCpu(process.pid, engine === 'postgres' ? pgUrl : undefined, async () => {
      const cpu = process.cpuUsage();
      const start = performance.now();
      const result = drips ? await processDrips() : await notify.campaigns.send(id);
      return { result, ms: performance.now() - start, used: process.cpuUsage(cpu) };
    });
    const { result, ms, used } = measured.result;
    const databaseUs = measured.databaseUs ?? 0;
    const spent = wall.take();
    if (session && last) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileFile!, JSON.stringify(profile));
      session.disconnect();
    }
    const sink_ = await sink.waitFor(RECIPIENTS);
    if (result.sent !== RECIPIENTS || sink_.duplicates > 0) throw new Error(`sent ${result.sent} of ${RECIPIENTS}; sink ${sink_.messages}, ${sink_.duplicates} duplicates`);
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    // a group commit that is one statement (PostgreSQL) is a transaction of its own
    const commits = (counts.get('commit') ?? 0) + [...counts].filter(([text]) => ['with started as', 'with suppressed as', 'with finished as', 'select kind, id, attempts from notify_send_group', 'select kind, id from notify_step_group'].some((w) => text.startsWith(w))).reduce((a, [, k]) => a + k, 0);
    const cpuUs = ((used.user + used.system) / result.sent).toFixed(0);
    console.log(`round ${r + 1} (${engine}, ${RECIPIENTS}): ${(result.sent / commits).toFixed(2)} messages per commit, ${(total / result.sent).toFixed(2)} statements per message, ${cpuUs} us CPU per message (raw nodemailer ${rawUs.toFixed(0)} us, ratio ${(rawUs / Number(cpuUs)).toFixed(3)}), ${((result.sent / ms) * 1000).toFixed(0)} msg/s (wall, load-dependent)`);
    if (engine === 'postgres') console.log(`  PostgreSQL backends: ${(databaseUs / result.sent).toFixed(0)} us CPU per message (10 ms ticks)`);
    console.log(`  ${describeWallTime(spent, ms, 5, result.sent)}`);
    if (backendStats) printBackendStats(backendStats.take(), result.sent);
    if (last) for (const [text, k] of [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${String(k).padStart(6)} ${times.has(text) ? `${((times.get(text) ?? 0) / k).toFixed(1).padStart(6)} us` : ''}  ${text.slice(0, 120)}`);
  }
  raw.close();
} finally {
  if (engine === 'postgres') await notify.context.store.dialect.destroyData();
  else await notify.close();
  await sink.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** the backend's CPU per message by statement (the costliest first), and per run of each */
function printBackendStats(stats: Map<string, StatementCpu>, sent: number) {
  const rows = [...stats].map(([text, s]) => ({ text, ...s, runs: counts.get(text) ?? 0 })).sort((a, b) => b.ownUs + b.afterUs - (a.ownUs + a.afterUs));
  const total = rows.reduce((a, r) => a + r.ownUs + r.afterUs, 0);
  console.log(`  PostgreSQL backends (their own getrusage, log_statement_stats): ${(total / sent).toFixed(0)} us CPU per message; per message / per run, own + after (its commit at Sync):`);
  for (const r of rows.slice(0, 8)) {
    const per = (us: number, n: number) => (n > 0 ? (us / n).toFixed(0) : '-').padStart(5);
    console.log(`  ${per(r.ownUs + r.afterUs, sent)} us/msg ${per(r.ownUs, r.runs)} + ${per(r.afterUs, r.runs)} us/run x${String(r.runs).padStart(5)}  ${r.text.slice(0, 90)}`);
    console.log(`         ${Object.entries(r.byMessage).map(([m, us]) => `${m} ${per(us, r.runs).trim()}`).join(', ')} us/run`);
  }
}

/** notify:process-drips until the step went to every enrolled contact */
async function processDrips(): Promise<{ sent: number }> {
  let sent = 0;
  for (;;) {
    const r = await notify.drips.process();
    sent += r.sent;
    if (r.sent + r.failed === 0 || sent >= RECIPIENTS) return { sent };
  }
}

/** CPU us per message of raw nodemailer sending pre-built MIME through the same kind of pool, to the same sink */
async function rawCpu(transport: ReturnType<typeof pooledTransport>, html: string): Promise<number> {
  const to = recipients(RECIPIENTS, 'raw');
  const raws = await prebuild(html, to);
  await sink.reset();
  const cpu = process.cpuUsage();
  await timeSends((i) => transport.sendMail({ envelope: { from: FROM, to: [to[i]] }, raw: raws[i] }), RECIPIENTS);
  const used = process.cpuUsage(cpu);
  await sink.waitFor(RECIPIENTS);
  return (used.user + used.system) / RECIPIENTS;
}

/** counts every statement either driver runs, by its text (transaction control included) */
function countStatements() {
  const probe = new BetterSqlite3(':memory:');
  const Statement = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate'] as const) {
    const original = Statement[method];
    Statement[method] = function (this: { source: string }, ...params: unknown[]) {
      const text = this.source.trim().toLowerCase();
      count(text);
      const t = process.cpuUsage();
      try {
        return original.apply(this, params);
      } finally {
        const d = process.cpuUsage(t);
        times.set(text, (times.get(text) ?? 0) + d.user + d.system);
      }
    };
  }
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string })?.text;
    if (text) count(text.trim().toLowerCase());
    return (query as (...a: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
}
