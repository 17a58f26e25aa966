// The command Stryker runs for each mutant (stryker.config.mjs): the target's test files, SQLite only,
// in the order listed, in one node process (one tsx start-up instead of one per file), stopping at the
// first failing test (scripts/mutation-bail-reporter.mjs), so a killed mutant costs only the tests up to it.
// Usage: node scripts/mutation-command.mjs <target>
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { targetTests } from './mutation-targets.mjs';

// PostgreSQL, Redis and the browser would triple each run and tell nothing more about the logic mutated.
const env = { ...process.env };
for (const name of ['NOTIFY_TEST_PG_URL', 'NOTIFY_TEST_REDIS_URL', 'NOTIFY_TEST_CHROMIUM', 'CI']) delete env[name];
// Importing the files one after another registers their top-level tests in that order; node:test runs
// top-level tests one at a time, so the first file's tests finish before the second file's start.
const imports = targetTests(process.argv[2]).map((file) => `await import(${JSON.stringify(pathToFileURL(file).href)});`);
const reporter = pathToFileURL('scripts/mutation-bail-reporter.mjs').href;
const run = spawnSync(process.execPath, ['--import', 'tsx', `--test-reporter=${reporter}`, '--test-reporter-destination=stdout', '--input-type=module', '-e', imports.join('\n')], {
  stdio: 'inherit',
  env,
});
process.exit(run.status ?? 1);
