// Node 20's test runner does not expand globs: test files are collected here.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const walk = (p, suffix) => (!existsSync(p) ? [] : statSync(p).isDirectory() ? readdirSync(p).flatMap((name) => walk(join(p, name), suffix)) : p.endsWith(suffix) ? [p] : []);

/** The files under each path (a folder, walked and sorted, or one file), in the order given; missing paths give none. */
export function testFiles(paths, suffix = '.test.ts') {
  return [...new Set(paths.flatMap((p) => walk(p, suffix).sort()))];
}
