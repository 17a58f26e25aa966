import { SUBJECT_CORE, pinSelf } from './lib/cores.ts';
import { postgresAvailable, PG_URL } from './lib/db.ts';
import { type GuardResult, startGuard } from './lib/guard.ts';
import { ROUNDS, sized } from './lib/options.ts';
import { report, skip } from './lib/report.ts';
import { benchStats } from './stats.ts';

/**
 * getCampaignStats at 1,000,000 send rows: median time per call against the indexed scan it
 * replaces; target <= 1 ms. Rounds interleave one scan and a series of calls.
 */
const ROWS = Number(process.env.BENCH_STATS_ROWS) || sized(1_000_000, 10_000);
const CALLS = sized(1000, 50);

pinSelf(SUBJECT_CORE);
for (const engine of ['sqlite', 'postgres'] as const) {
  const name = `getCampaignStats at ${ROWS.toLocaleString('en-US')} rows [${engine}]`;
  if (engine === 'postgres' && !(await postgresAvailable())) {
    skip(name, 'PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL');
    continue;
  }
  process.env.NOTIFY_BENCH_PG_URL ??= PG_URL;
  let checked: GuardResult | undefined;
  const r = await benchStats(engine, ROWS, CALLS, ROUNDS, async (timed) => {
    const guard = await startGuard();
    await timed();
    checked = guard.finish();
  });
  const note = `p99 ${r.p99Ms.toFixed(3)} ms, seeded in ${(r.seedMs / 1000).toFixed(1)} s`;
  report({ name, value: r.medianMs, unit: 'ms', baselineName: 'indexed scan', baseline: r.scanMedianMs, target: { on: 'value', op: '<=', limit: 1 }, note }, checked!);
}
