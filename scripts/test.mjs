// Runs the test files under a folder in one node:test run.
// Usage: node scripts/test.mjs [suffix=.test.ts] [dir=test] [extra node --test flags...]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { testFiles } from './test-files.mjs';

const [suffix = '.test.ts', dir = 'test', ...flags] = process.argv.slice(2);
// Two files run at a time, in the order given. Most of a run's time is in the files that start notify
// processes or a browser: started first, they leave no long file running alone at the end while the
// other slot idles. A file's weight is how many such starts its source holds (stable within a weight).
const STARTS = /\b(spawn\w*|execFile\w*|run)\(|\.(cli|serve|worker|start)\(|chromium\.launch/g;
const weight = (file) => readFileSync(file, 'utf8').match(STARTS)?.length ?? 0;
const files = testFiles([dir], suffix)
  .map((file) => ({ file, weight: weight(file) }))
  .sort((a, b) => b.weight - a.weight)
  .map((f) => f.file);
if (files.length === 0) {
  console.error(`no ${suffix} files under ${dir}/`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...flags, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
