// scripts/mutation-fast.mjs, first half: instruments the target's files with Stryker's own instrumenter (every
// mutant in the code at once, switched on by `__stryker__.activeMutant`, as Stryker does) and bundles each test
// file of the target with the instrumented sources, `node:test` replaced by scripts/mutation-node-test-shim.mjs.
// The checkout is not copied: the bundler reads the instrumented text in place of those files.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { matchesGlob, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Instrumenter } from '@stryker-mutator/instrumenter';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS, withImportMeta } from './mutation-bundle.mjs';
import { testFiles } from './test-files.mjs';

const SHIM = fileURLToPath(new URL('./mutation-node-test-shim.mjs', import.meta.url));

function quietLogger() {
  const no = () => false;
  const logger = { isTraceEnabled: no, isDebugEnabled: no, isInfoEnabled: no, isWarnEnabled: no, isErrorEnabled: () => true, isFatalEnabled: () => true };
  for (const level of ['trace', 'debug', 'info', 'warn']) logger[level] = () => {};
  logger.error = logger.fatal = console.error;
  return logger;
}

/** The files a target's globs name, as Stryker's `mutate` would pick them. */
export function mutatedFiles(globs) {
  return testFiles(['src'], '.ts').filter((f) => globs.some((g) => matchesGlob(f, g)));
}

/** { sources: path -> original text, instrumented: absolute path -> instrumented text, mutants } */
export async function instrument(files) {
  const input = files.map((name) => ({ name, content: readFileSync(name, 'utf8'), mutate: true }));
  const { files: out, mutants } = await new Instrumenter(quietLogger()).instrument(input, { plugins: null, excludedMutations: [], ignorers: [] });
  return {
    sources: Object.fromEntries(input.map((f) => [f.name, f.content])),
    instrumented: new Map(out.map((f) => [resolve(f.name), f.content])),
    mutants,
  };
}

/** As scripts/mutation-bundle.mjs: import.meta stays the source file's; plus the instrumented text and the shim. */
function plugin(instrumented, tsconfigRaw) {
  return {
    name: 'mutation-fast',
    setup(b) {
      b.onResolve({ filter: /^node:test$/ }, (args) => (args.importer === SHIM ? { path: 'node:test', external: true } : { path: SHIM }));
      b.onLoad({ filter: /\.[cm]?ts$/ }, async ({ path }) => ({ contents: await withImportMeta(path, instrumented.get(path) ?? (await readFile(path, 'utf8')), tsconfigRaw), loader: 'js' }));
    },
  };
}

/** Bundles the test files into `outdir`; returns test file -> absolute bundle path. */
export async function bundle(tests, instrumented, outdir) {
  const entries = Object.fromEntries(tests.map((f) => [f.replace(/\.ts$/, ''), resolve(f)]));
  await build({ entryPoints: entries, outdir, ...BUNDLE_OPTIONS, plugins: [plugin(instrumented, readFileSync('tsconfig.json', 'utf8'))] });
  return Object.fromEntries(tests.map((f) => [f, resolve(outdir, f.replace(/\.ts$/, '.mjs'))]));
}
