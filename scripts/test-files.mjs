// Node 20's test runner does not expand globs: test files are collected here.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

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

/** the timings file of the repository at `root`; none yet: no timings */
export function readTimings(root) {
  const path = resolve(root, TIMINGS_FILE);
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
}

/** writes `timings` (seconds by path), rounded and sorted by path, dropping files that are gone */
export function writeTimings(root, timings) {
  const rounded = Object.fromEntries(
    Object.entries(timings)
      .filter(([f]) => existsSync(resolve(root, f)))
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([f, s]) => [f, Math.round(s * 10) / 10]),
  );
  writeFileSync(resolve(root, TIMINGS_FILE), `${JSON.stringify(rounded, null, 2)}\n`);
}
