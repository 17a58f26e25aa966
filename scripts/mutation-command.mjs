// The command Stryker runs for each mutant (stryker.config.mjs): the target's test files one after
// another, SQLite only, stopping at the first failure (a killed mutant costs only the files up to it).
// Usage: node scripts/mutation-command.mjs <target>
import { spawnSync } from 'node:child_process';
import { targetTests } from './mutation-targets.mjs';

// PostgreSQL, Redis and the browser would triple each run and tell nothing more about the logic mutated.
const env = { ...process.env };
for (const name of ['NOTIFY_TEST_PG_URL', 'NOTIFY_TEST_REDIS_URL', 'NOTIFY_TEST_CHROMIUM', 'CI']) delete env[name];
for (const file of targetTests(process.argv[2])) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--test-reporter=dot', file], { stdio: 'inherit', env });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
