import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mailer } from '../src/core/mailer.ts';
import { createNotify } from '../src/notify.ts';
import { measureCpu } from './lib/cpu.ts';

/**
 * What a segment costs a campaign run per message: a list campaign and the same campaign with a
 * segment every member matches (so both send to everyone), run alternately (A/B/A/B: a loaded
 * machine's drift falls on both), each to a mailer that returns at once, so what is measured is the
 * send loop and its writes. Prints, per round, the CPU of this process per message and, on
 * PostgreSQL, of its backends (10 ms ticks). Not part of `npm run bench`: a tool for comparing two
 * versions of the segment check at each send's start.
 *   npx tsx bench/segment-cost.ts [sqlite|postgres] [recipients=1000] [rounds=4]
 */
const [engine = 'sqlite', n = '1000', roundsArg = '4'] = process.argv.slice(2);
const RECIPIENTS = Number(n);
const ROUNDS = Number(roundsArg);
const SEGMENT = { all: [{ attr: 'plan', eq: 'pro' }, { attr: 'age', gt: 30 }] };

const nullMailer: Mailer = { name: 'null', send: async (m) => ({ messageId: `<${m.sendToken}@bench>` }) };
const dir = mkdtempSync(join(tmpdir(), 'notify-segment-cost-'));
const pgUrl = process.env.NOTIFY_BENCH_PG_URL ?? process.env.NOTIFY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const database = engine === 'postgres' ? `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=segment_cost_${process.pid}` : `sqlite:${join(dir, 'notify.db')}`;
const notify = await createNotify({ database, mailer: nullMailer, configFile: false, envFile: false, env: {}, logLevel: 'warn', fromEmail: 'news@example.com', baseUrl: 'https://news.example.com', batchSize: 1_000_000 });
const html = '<p>This week: <a href="https://example.com/a">a</a> and <a href="https://example.com/b">b</a></p>';

/** one campaign run, its CPU per message: this process, and the PostgreSQL backends */
async function run(segment: typeof SEGMENT | undefined): Promise<{ us: number; dbUs: number }> {
  const { id } = await notify.campaigns.create({ subject: 'This week', html, list: 'readers', ...(segment ? { segment } : {}) });
  const measured = await measureCpu(process.pid, engine === 'postgres' ? pgUrl : undefined, async () => {
    const cpu = process.cpuUsage();
    const result = await notify.campaigns.send(id);
    return { result, used: process.cpuUsage(cpu) };
  });
  const { result, used } = measured.result;
  if (result.sent !== RECIPIENTS) throw new Error(`sent ${result.sent} of ${RECIPIENTS}`);
  return { us: (used.user + used.system) / RECIPIENTS, dbUs: (measured.databaseUs ?? 0) / RECIPIENTS };
}

try {
  for (let i = 0; i < RECIPIENTS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, RECIPIENTS - i) }, (_, j) => notify.contacts.upsert({ email: `reader${i + j}@example.com`, name: 'Reader', lists: ['readers'], attributes: { plan: 'pro', age: 40 } })),
    );
  }
  // warm-up: JIT and the pool's connections (not counted)
  await run(undefined);
  await run(SEGMENT);
  const fmt = (r: { us: number; dbUs: number }) => `${r.us.toFixed(0)} us${engine === 'postgres' ? ` + backends ${r.dbUs.toFixed(0)} us` : ''}`;
  for (let r = 0; r < ROUNDS; r++) {
    // the order alternates too, so neither always runs on the larger table
    const [first, second] = r % 2 === 0 ? [undefined, SEGMENT] : [SEGMENT, undefined];
    const a = await run(first);
    const b = await run(second);
    const [plain, segmented] = first ? [b, a] : [a, b];
    console.log(`round ${r + 1} (${engine}, ${RECIPIENTS}): CPU per message, list ${fmt(plain)}; list + segment ${fmt(segmented)}; ratio ${(segmented.us / plain.us).toFixed(2)}`);
  }
} finally {
  if (engine === 'postgres') await notify.context.store.dialect.destroyData();
  else await notify.close();
  rmSync(dir, { recursive: true, force: true });
}
