// npm run test:mutation -- <target or group...> [stryker flags]: one Stryker run per target, in turn,
// then the mutation score per file and per folder over the targets run. Targets and groups are in
// scripts/mutation-targets.mjs; e.g. `npm run test:mutation -- webhooks`, `... -- suppression --force`
// (--force ignores the incremental file; give flag values with `=`, e.g. `--concurrency=2`, `--timeoutMS=30000`;
// --tsx runs the test files through tsx instead of bundles; --scores only prints the scores of the last reports,
// of every target when no target is named; --fast runs scripts/mutation-fast.mjs instead of Stryker).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { DETECTED, printScores } from './mutation-scores.mjs';
import { GROUPS, TARGETS, targetTests } from './mutation-targets.mjs';

const args = process.argv.slice(2);
// --fast: the in-process runner (scripts/mutation-fast.mjs), the same verdicts at a fraction of the CPU
if (args.includes('--fast')) {
  const fast = spawnSync(process.execPath, ['scripts/mutation-fast.mjs', ...args.filter((a) => a !== '--fast')], { stdio: 'inherit' });
  process.exit(fast.status ?? 1);
}
const tsx = args.includes('--tsx');
const scoresOnly = args.includes('--scores');
const flags = args.filter((a) => a.startsWith('-') && a !== '--tsx' && a !== '--scores');
const named = args.filter((a) => !a.startsWith('-'));
const asked = scoresOnly && named.length === 0 ? Object.keys(TARGETS) : named;
const unknown = asked.filter((n) => !(n in TARGETS) && !(n in GROUPS));
if (asked.length === 0 || unknown.length > 0) {
  if (unknown.length > 0) console.error(`unknown mutation target: ${unknown.join(', ')}`);
  console.error(`usage: npm run test:mutation -- <target...> [stryker flags]\n  targets: ${Object.keys(TARGETS).join(', ')}\n  groups: ${Object.entries(GROUPS).map(([g, t]) => `${g} (${t.join(', ')})`).join('; ')}`);
  process.exit(2);
}
const targets = [...new Set(asked.flatMap((n) => GROUPS[n] ?? [n]))];

/**
 * Stryker's incremental mode keeps a surviving mutant's verdict unless a test that covered it changed,
 * so a test file newly listed for the target, written to kill it, would not be run. When the target's test files
 * changed since its last run, the undetected mutants are dropped from the incremental file and tested
 * again; detected ones stay (a test added cannot un-kill a mutant; after weakening a test, use --force).
 */
function forgetUndetectedIfTestsChanged(name) {
  const hash = createHash('sha256');
  for (const file of targetTests(name)) hash.update(`${file}\0${readFileSync(file)}\0`);
  const digest = hash.digest('hex');
  const stamp = `reports/mutation/${name}.tests.sha256`;
  const incremental = `reports/mutation/${name}.incremental.json`;
  if (existsSync(incremental) && existsSync(stamp) && readFileSync(stamp, 'utf8') !== digest) {
    const report = JSON.parse(readFileSync(incremental, 'utf8'));
    for (const file of Object.values(report.files)) file.mutants = file.mutants.filter((m) => DETECTED.has(m.status));
    writeFileSync(incremental, JSON.stringify(report));
    console.log(`${name}: its tests changed since the last run; the mutants they missed are tested again`);
  }
  return () => writeFileSync(stamp, digest);
}

// SQLite only: PostgreSQL, Redis and the browser would triple each run and tell nothing more about the logic mutated.
const env = { ...process.env, NOTIFY_MUTATE_TSX: tsx ? '1' : '0' };
for (const name of ['NOTIFY_TEST_PG_URL', 'NOTIFY_TEST_REDIS_URL', 'NOTIFY_TEST_CHROMIUM', 'CI']) delete env[name];

for (const name of scoresOnly ? [] : targets) {
  console.log(`\n== mutation testing: ${name} (${TARGETS[name].mutate.join(', ')})`);
  const stampTests = forgetUndetectedIfTestsChanged(name);
  const run = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs', ...flags], { stdio: 'inherit', env: { ...env, NOTIFY_MUTATE: name } });
  if (run.status !== 0) process.exit(run.status ?? 1);
  stampTests();
  // the in-process runner's verdicts of this target (scripts/mutation-fast.mjs) are now the older ones
  rmSync(`reports/mutation/${name}.fast.json`, { force: true });
}

await printScores(targets);
