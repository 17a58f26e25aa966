import assert from 'node:assert/strict';
import { cpus, loadavg } from 'node:os';
import { describe, test } from 'node:test';
import { createNotify } from '../../src/notify.ts';
import { busiestWindow, rateOf } from '../helpers/windows.ts';
import { NO_PG } from './helpers/pg.ts';
import { type CliRun, waitUntil } from './helpers/processes.ts';
import { useCliRig } from './helpers/rig.ts';

const REDIS_URL = process.env.NOTIFY_TEST_REDIS_URL;
const SEND_RATE = 20;
const GMAIL_RATE = 5;
/** one in five to gmail.com: 4 a second at the full rate, under its own limit, so the fleet can reach sendRate */
const N = 500;
const emailOf = (i: number) => (i % 5 === 0 ? `rel${i}@gmail.com` : `rel${i}@example.com`);

/**
 * sendRate and domainRates over a fleet: four `notify worker` processes on one PostgreSQL send one
 * campaign to the SMTP sink, taking turns through the shared rateLimitStore (Redis, then the
 * database). The sink's receipt times are what a provider would count.
 */
describe('sendRate and domainRates over 4 worker processes', { skip: NO_PG, timeout: 300_000 }, () => {
  const rig = useCliRig();

  async function seed(url: string): Promise<number> {
    const notify = await createNotify({ database: url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com' });
    try {
      for (let i = 0; i < N; i += 25) await Promise.all(Array.from({ length: Math.min(25, N - i) }, (_, j) => notify.contacts.upsert({ email: emailOf(i + j), lists: ['paced'] })));
      return (await notify.campaigns.create({ subject: 'Paced', html: '<p>Hello</p>', list: 'paced' })).id;
    } finally {
      await notify.close();
    }
  }

  async function fleetRun(t: { diagnostic(s: string): void }, rateLimitStore: string) {
    const loadBefore = loadavg()[0];
    const id = await seed(rig.db.url);
    const cli = rig.cliFor({ rateLimitStore, sendRate: String(SEND_RATE), domainRates: `gmail.com=${GMAIL_RATE}`, batchSize: '100' });
    const workers: CliRun[] = Array.from({ length: 4 }, () => cli.start(['worker', '--interval', '0.3']));
    try {
      for (const w of workers) await waitUntil(() => (/notify worker: started/.test(w.stdout()) ? true : w.proc.exitCode !== null ? Promise.reject(new Error(w.stderr())) : undefined), 60_000, 'worker start');
      const notify = await createNotify({ database: rig.db.url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com' });
      await notify.campaigns.schedule(id, new Date(Date.now() + 1000));
      await notify.close();
      await waitUntil(() => (rig.sink.messages.length >= N ? true : undefined), 180_000, `${N} messages (${rig.sink.messages.length} so far)`);
    } finally {
      for (const w of workers) w.proc.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
    }
    const all = rig.sink.messages.map((m) => m.at);
    const gmail = rig.sink.messages.filter((m) => m.envelope.to[0].endsWith('@gmail.com')).map((m) => m.at);
    const to = rig.sink.messages.map((m) => m.envelope.to[0]);
    t.diagnostic(
      `${rateLimitStore.split(':')[0]}: ${N} messages in ${((Math.max(...all) - Math.min(...all)) / 1000).toFixed(1)} s: ${rateOf(all).toFixed(2)}/s overall (busiest second ${busiestWindow(all)}), ` +
        `gmail.com ${rateOf(gmail).toFixed(2)}/s (busiest second ${busiestWindow(gmail)})`,
    );
    assert.equal(new Set(to).size, N, 'everyone exactly once');
    assert.equal(to.length, N);
    assert.ok(busiestWindow(all) <= SEND_RATE, `busiest second ${busiestWindow(all)} > ${SEND_RATE}`);
    assert.ok(busiestWindow(gmail) <= GMAIL_RATE, `busiest second to gmail.com ${busiestWindow(gmail)} > ${GMAIL_RATE}`);
    // Throughput depends on the machine: a turn counts until a second after its message left, so time
    // spent delivering is capacity lost (rate / (1 + seconds per delivery)). With other work on the
    // machine (run queue over twice the cores before or after) the figure is reported, not judged,
    // as the benchmarks do; the limits above hold whatever the load.
    const busy = Math.max(loadBefore, loadavg()[0]) > 2 * cpus().length;
    if (busy) t.diagnostic(`throughput UNRELIABLE (machine busy: load ${loadBefore.toFixed(1)} / ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`);
    else assert.ok(rateOf(all) >= 0.9 * SEND_RATE, `throughput ${rateOf(all).toFixed(2)}/s < 0.9 x ${SEND_RATE}`);
  }

  test('Redis as rateLimitStore', { skip: REDIS_URL ? false : 'set NOTIFY_TEST_REDIS_URL' }, async (t) => {
    const prefix = `notify-rel-pacing-${process.pid}-${Date.now().toString(36)}:`;
    await fleetRun(t, `${REDIS_URL}${REDIS_URL!.includes('?') ? '&' : '?'}prefix=${prefix}`);
  });

  test('the database (PostgreSQL) as rateLimitStore', async (t) => {
    await fleetRun(t, 'database');
  });
});
