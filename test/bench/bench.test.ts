import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { RESULT_LINE } from '../../bench/lib/report.ts';

const run = promisify(execFile);
const num = (s: string) => Number(s.replace(/,/g, ''));

// One short round of two cases: checks that the bench runs and what it prints, not the figures
// (the machine running the tests is loaded). A load threshold below any load average makes
// the guard find the machine busy, so every verdict must be UNRELIABLE. Without the test
// PostgreSQL, the bench is pointed at a port where none answers: its figures are SKIPped.
const PG = process.env.NOTIFY_TEST_PG_URL;

test('npm run bench -- --quick prints the machine and one well-formed line per target, guarded by the load', { timeout: 180_000 }, async () => {
  const env = { ...process.env, BENCH_MAX_LOAD: '-1', NOTIFY_BENCH_PG_URL: PG ?? 'postgres://postgres@127.0.0.1:1/none' };
  const { stdout } = await run('npm', ['run', '-s', 'bench', '--', '--quick', 'render', 'campaign-stats'], { env, maxBuffer: 16 * 1024 * 1024 });
  assert.match(stdout, /^machine: .+, \d+ cores, node v\d+\.\d+\.\d+, \w+$/m);
  assert.match(stdout, /^pinning: .+; HTTP load: (wrk|autocannon); load average before: \d+\.\d\d$/m);

  const summary = stdout.slice(stdout.indexOf('\n## summary'));
  const lines = summary.split('\n').filter((l) => RESULT_LINE.test(l));
  const names = lines.map((l) => RESULT_LINE.exec(l)![1]);
  const expected = ['per-recipient render after compile', 'getCampaignStats at 10,000 rows [sqlite]'];
  if (PG) expected.push('getCampaignStats at 10,000 rows [postgres]');
  else assert.match(summary, /^getCampaignStats at 10,000 rows \[postgres\]: SKIP \(PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL\)$/m);
  assert.deepEqual(names, expected, summary);
  for (const line of lines) {
    const [, , value, unit, , baseline, ratio, , limit, verdict, notes] = RESULT_LINE.exec(line)!;
    assert.ok(num(value) > 0 && num(baseline) > 0 && Number.isFinite(num(limit)), line);
    assert.ok(Math.abs(num(ratio) / (num(value) / num(baseline)) - 1) < 0.02, `ratio is value / baseline: ${line}`);
    assert.ok(['µs', 'ms'].includes(unit), line);
    assert.equal(verdict, 'UNRELIABLE (machine busy)', line);
    assert.match(notes, /load \d+\.\d\d -> \d+\.\d\d, other processes \d+\.\d\d cores$/, line);
  }
  assert.match(summary, new RegExp(`^0 pass, 0 fail, ${expected.length} unreliable, ${PG ? 0 : 1} skipped$`, 'm'));
});
