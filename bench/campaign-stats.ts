import { postgresAvailable, PG_URL } from './lib/db.ts';
import { report, skip } from './lib/report.ts';
import { benchStats } from './stats.ts';

/**
 * getCampaignStats at 1,000,000 send rows (bench/stats.ts does the seeding and timing):
 * median time per call against the indexed scan it replaces; goal <= 1 ms.
 */
const ROWS = Number(process.env.BENCH_STATS_ROWS ?? 1_000_000);

for (const engine of ['sqlite', 'postgres'] as const) {
  const name = `getCampaignStats at ${ROWS.toLocaleString('en-US')} rows [${engine}]`;
  if (engine === 'postgres' && !(await postgresAvailable())) {
    skip(name, 'PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL');
    continue;
  }
  process.env.NOTIFY_BENCH_PG_URL ??= PG_URL;
  const r = await benchStats(engine, ROWS, 2000);
  report({
    name,
    figure: r.medianMs,
    unit: 'ms',
    baselineName: 'indexed scan',
    baseline: r.scanMedianMs,
    kind: 'time',
    goal: { on: 'figure', max: 1 },
    note: `p99 ${r.p99Ms.toFixed(3)} ms, seeded in ${(r.seedMs / 1000).toFixed(1)} s`,
  });
}
