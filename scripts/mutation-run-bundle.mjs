// The tap runner's entry for one test file when Stryker runs bundles: `node ... mutation-run-bundle.mjs <test.ts>`.
// Reports keep naming the .ts file (stable across bundled and tsx runs); the process loads its bundle.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleFor } from './mutation-bundle-path.mjs';

const testFile = process.argv[2];
if (!testFile) throw new Error('usage: node scripts/mutation-run-bundle.mjs <test file>');
await import(pathToFileURL(resolve(bundleFor(testFile))).href);
