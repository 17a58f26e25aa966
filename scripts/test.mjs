// Node 20's test runner does not expand globs: collect test files here, then run them all in one node:test run.
// Usage: node scripts/test.mjs [suffix=.test.ts] [dir=test] [extra node --test flags...]
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const [suffix = '.test.ts', dir = 'test', ...flags] = process.argv.slice(2);
const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith(suffix) ? [join(d, e.name)] : []));
const files = walk(dir).sort();
if (files.length === 0) {
  console.error(`no ${suffix} files under ${dir}/`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...flags, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
