// StrykerJS over one target of scripts/mutation-targets.mjs, chosen by NOTIFY_MUTATE
// (`npm run test:mutation -- webhooks` sets it). Not part of CI: it runs the tests once per mutant.
import { cpus, loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { TARGETS, targetTests } from './scripts/mutation-targets.mjs';
import { TIMINGS_FILE, orderBySlowest } from './scripts/test-files.mjs';

const name = process.env.NOTIFY_MUTATE ?? '';
if (!TARGETS[name]) throw new Error(`NOTIFY_MUTATE=${name}: no such target (${Object.keys(TARGETS).join(', ')})`);
if (targetTests(name).length === 0) throw new Error(`mutation target ${name} lists no existing test file`);

// Bundled by default (scripts/mutation-bundle.mjs as the build command: one plain file per test, about half
// the start-up of tsx); NOTIFY_MUTATE_TSX=1 (`npm run test:mutation -- <target> --tsx`) runs the sources through tsx.
const tsx = process.env.NOTIFY_MUTATE_TSX === '1';
// A mutant runs only the test files that reach it, in this order, and stops at the first that fails:
// the fastest first, so a mutant that a quick file kills never waits for a slow one.
const timings = JSON.parse(readFileSync(TIMINGS_FILE, 'utf8'));
const testFiles = orderBySlowest(targetTests(name), timings).reverse();
// A mutant that makes code loop costs the whole timeout: the clean run's time x2 plus timeoutMS. 10 s is
// plenty on a quiet machine (a bundled test file starts and runs in 0.4 to 1.5 s); on a loaded one the same
// file can take ten times that, and a too-short bound turns survivors into timeouts, so the bound grows with
// the load per core when the run starts, up to 60 s. `--timeoutMS=N` overrides it.
const loadPerCore = loadavg()[0] / cpus().length;
const timeoutMS = Math.round(Math.min(60_000, 10_000 * Math.max(1, loadPerCore)));

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // node:test prints TAP; the tap runner starts one node process per test file and records which
  // mutants each file reaches, so a mutant runs only the files that reach it (coverage per file),
  // stopping at the first file that fails.
  testRunner: 'tap',
  coverageAnalysis: 'perTest',
  tap: {
    testFiles,
    nodeArgs: tsx
      ? ['--import', 'tsx', '--test-reporter=tap', '-r', '{{hookFile}}', '{{testFile}}']
      : ['--test-reporter=tap', '-r', '{{hookFile}}', 'scripts/mutation-run-bundle.mjs', '{{testFile}}'],
    forceBail: true,
  },
  // In the sandbox, after instrumentation: the bundles hold the instrumented code, and the hook's
  // __stryker__ global is the one the bundled code reports to (one process, one global object).
  ...(tsx ? {} : { buildCommand: 'node scripts/mutation-bundle.mjs' }),
  mutate: TARGETS[name].mutate,
  concurrency: 2,
  timeoutFactor: 2,
  timeoutMS,
  dryRunTimeoutMinutes: 30,
  // A rerun tests only the mutants whose code or covering tests changed since the last run of the same target.
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  clearTextReporter: { allowColor: false, reportTests: false, reportMutants: true, reportScoreTable: true },
  // The sandbox copy needs the sources and tests, not the build, outputs or local databases.
  ignorePatterns: ['dist', '.test-build', '.bench-build', 'test-output', 'notify-demo', 'outbox', '*.db', '*.db-wal', '*.db-shm', 'bench', 'reports', '.mutation-bundles', '.stryker-tmp*'],
  // one sandbox folder per target, so that two targets can run side by side from the same checkout
  tempDirName: `.stryker-tmp-${name}`,
  cleanTempDir: 'always',
};
