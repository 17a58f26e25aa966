// StrykerJS over one target of scripts/mutation-targets.mjs, chosen by NOTIFY_MUTATE
// (`npm run test:mutation -- webhooks` sets it). Not part of CI: every mutant reruns the target's tests.
import { TARGETS, targetTests } from './scripts/mutation-targets.mjs';

const name = process.env.NOTIFY_MUTATE ?? '';
if (!TARGETS[name]) throw new Error(`NOTIFY_MUTATE=${name}: no such target (${Object.keys(TARGETS).join(', ')})`);
if (targetTests(name).length === 0) throw new Error(`mutation target ${name} lists no existing test file`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // node:test has no Stryker runner: the command runner judges a mutant by the command's exit code.
  testRunner: 'command',
  commandRunner: { command: `node scripts/mutation-command.mjs ${name}` },
  // The command runner cannot tell which test covers which mutant, so every mutant runs the target's tests.
  coverageAnalysis: 'off',
  mutate: TARGETS[name].mutate,
  concurrency: 1,
  // A run may take the clean run's time x1.5 plus 15 s (a shared, busy machine) before it counts as a timeout.
  timeoutFactor: 1.5,
  timeoutMS: 15_000,
  dryRunTimeoutMinutes: 15,
  // A rerun tests only the mutants whose code or tests changed since the last run of the same target.
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  clearTextReporter: { allowColor: false, reportTests: false, reportMutants: true, reportScoreTable: true },
  // The sandbox copy needs the sources and tests, not the build, outputs or local databases.
  ignorePatterns: ['dist', 'test-output', 'notify-demo', 'outbox', '*.db', '*.db-wal', '*.db-shm', 'bench'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
