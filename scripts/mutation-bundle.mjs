// Stryker's buildCommand (stryker.config.mjs): runs in the sandbox after the sources were instrumented and
// bundles each test file of the target (NOTIFY_MUTATE) with the code it imports into one plain ESM file under
// BUNDLE_DIR, so that each mutant's node process loads one file instead of transpiling hundreds through tsx
// (about half the start-up time of a test file). Packages stay external: node_modules is shared, not copied.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';
import { BUNDLE_DIR, bundleFor } from './mutation-bundle-path.mjs';
import { TARGETS, targetTests } from './mutation-targets.mjs';

/**
 * A bundle lives elsewhere than the files it was made of, and code finds its views, fixtures and
 * package.json from its own location: each module's import.meta location is fixed to its source file's.
 * esbuild's define replaces the expressions only, so a string that merely spells `import.meta.url` (the CLI
 * bundle's banner does) stays as written; a replacement of the text would break its quotes.
 */
const keepImportMeta = (tsconfigRaw) => ({
  name: 'keep-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, async ({ path }) => ({ contents: await withImportMeta(path, await readFile(path, 'utf8'), tsconfigRaw), loader: 'js' }));
  },
});

/** The TypeScript module at `path` (its text given) as JavaScript whose import.meta is that file's. */
export async function withImportMeta(path, text, tsconfigRaw) {
  const define = {
    'import.meta.url': JSON.stringify(pathToFileURL(path).href),
    'import.meta.dirname': JSON.stringify(dirname(path)),
    'import.meta.filename': JSON.stringify(path),
  };
  return (await transform(text, { loader: 'ts', define, sourcefile: path, tsconfigRaw })).code;
}

/** What every mutation bundle is: one plain ES module per test file for node 20, packages left as imports. */
export const BUNDLE_OPTIONS = { outExtension: { '.js': '.mjs' }, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' };

/** Bundles the given test files (paths relative to `cwd`, the working folder by default) into BUNDLE_DIR there. */
export async function bundleTests(files, { cwd = process.cwd() } = {}) {
  // a transform reads no tsconfig.json by itself: without verbatimModuleSyntax it would drop unused imports
  const tsconfig = resolve(cwd, 'tsconfig.json');
  const tsconfigRaw = existsSync(tsconfig) ? await readFile(tsconfig, 'utf8') : undefined;
  await build({
    absWorkingDir: resolve(cwd),
    entryPoints: Object.fromEntries(files.map((f) => [bundleFor(f).slice(BUNDLE_DIR.length + 1).replace(/\.mjs$/, ''), resolve(cwd, f)])),
    outdir: BUNDLE_DIR,
    ...BUNDLE_OPTIONS,
    plugins: [keepImportMeta(tsconfigRaw)],
  });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const name = process.env.NOTIFY_MUTATE ?? '';
  const files = process.argv.length > 2 ? process.argv.slice(2) : TARGETS[name] ? targetTests(name) : [];
  if (files.length === 0) throw new Error(`mutation-bundle: NOTIFY_MUTATE=${name} names no target and no files were given`);
  const started = Date.now();
  await bundleTests(files);
  console.log(`bundled ${files.length} test files into ${BUNDLE_DIR}/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
