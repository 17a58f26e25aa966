// Node 20's test runner does not expand globs: test files are collected here.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const walk = (p, suffix) => (!existsSync(p) ? [] : statSync(p).isDirectory() ? readdirSync(p).flatMap((name) => walk(join(p, name), suffix)) : p.endsWith(suffix) ? [p] : []);

/** The files under each path (a folder, walked and sorted, or one file), in the order given; missing paths give none. */
export function testFiles(paths, suffix = '.test.ts') {
  return [...new Set(paths.flatMap((p) => walk(p, suffix).sort()))];
}

/** Each test file's wall time in seconds on the last recorded run (`node scripts/test.mjs --record-timings`). */
export const TIMINGS_FILE = 'scripts/test-timings.json';

/**
 * The files, the slowest first by `timings` (seconds by path). A file with no timing yet (a new one)
 * counts as the median known file, so it neither holds up the long ones nor runs alone at the end.
 */
export function orderBySlowest(files, timings) {
  const known = files.map((f) => timings[f]).filter((s) => typeof s === 'number').sort((a, b) => a - b);
  const typical = known.length > 0 ? known[Math.floor(known.length / 2)] : 0;
  const cost = (f) => (typeof timings[f] === 'number' ? timings[f] : typical);
  // stable: equal costs keep the name order
  return [...files].sort((a, b) => cost(b) - cost(a));
}
