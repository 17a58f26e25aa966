// StrykerJS over one target of scripts/mutation-targets.mjs, chosen by NOTIFY_MUTATE
// (`npm run test:mutation -- webhooks` sets it). Not part of CI: it runs the tests once per mutant.
import { TARGETS, targetTests } from './scripts/mutation-targets.mjs';

const name = process.env.NOTIFY_MUTATE ?? '';
if (!TARGETS[name]) throw new Error(`NOTIFY_MUTATE=${name}: no such target (${Object.keys(TARGETS).join(', ')})`);
if (targetTests(name).length === 0) throw new Error(`mutation target ${name} lists no existing test file`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // node:test prints TAP; the tap runner starts one node process per test file and records which
  // mutants each file reaches, so a mutant runs only the files that reach it (coverage per file),
  // stopping at the first file that fails.
  testRunner: 'tap',
  coverageAnalysis: 'perTest',
  tap: {
    testFiles: targetTests(name),
    nodeArgs: ['--import', 'tsx', '--test-reporter=tap', '-r', '{{hookFile}}', '{{testFile}}'],
    forceBail: true,
  },
  mutate: TARGETS[name].mutate,
  concurrency: 2,
  // A run may take the clean run's time x1.5 plus 60 s (a shared machine where starting one test file can take 15 s or more) before it counts as a timeout.
  timeoutFactor: 1.5,
  timeoutMS: 60_000,
  dryRunTimeoutMinutes: 30,
  // A rerun tests only the mutants whose code or covering tests changed since the last run of the same target.
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  clearTextReporter: { allowColor: false, reportTests: false, reportMutants: true, reportScoreTable: true },
  // The sandbox copy needs the sources and tests, not the build, outputs or local databases.
  ignorePatterns: ['dist', 'test-output', 'notify-demo', 'outbox', '*.db', '*.db-wal', '*.db-shm', 'bench', 'reports'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
