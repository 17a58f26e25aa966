// Runs the test files under a folder in one node:test run.
// Usage: node scripts/test.mjs [suffix=.test.ts] [dir=test] [extra node --test flags...]
import { spawnSync } from 'node:child_process';
import { testFiles } from './test-files.mjs';

const [suffix = '.test.ts', dir = 'test', ...flags] = process.argv.slice(2);
const files = testFiles([dir], suffix);
if (files.length === 0) {
  console.error(`no ${suffix} files under ${dir}/`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...flags, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
