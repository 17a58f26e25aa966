// Stryker's buildCommand (stryker.config.mjs): runs in the sandbox after the sources were instrumented and
// bundles each test file of the target (NOTIFY_MUTATE) with the code it imports into one plain ESM file under
// BUNDLE_DIR, so that each mutant's node process loads one file instead of transpiling hundreds through tsx
// (about half the start-up time of a test file). Packages stay external: node_modules is shared, not copied.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_DIR, bundleFor } from './mutation-bundle-path.mjs';
import { TARGETS, targetTests } from './mutation-targets.mjs';

/**
 * A bundle lives elsewhere than the files it was made of, and code finds its views, fixtures and
 * package.json from its own location: each module's import.meta location is fixed to its source file's.
 */
const keepImportMeta = {
  name: 'keep-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const contents = source
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
        .replaceAll('import.meta.filename', JSON.stringify(path));
      return { contents, loader: 'ts' };
    });
  },
};

/** Bundles the given test files (paths relative to the working folder) into BUNDLE_DIR. */
export async function bundleTests(files) {
  await build({
    entryPoints: Object.fromEntries(files.map((f) => [bundleFor(f).slice(BUNDLE_DIR.length + 1).replace(/\.mjs$/, ''), resolve(f)])),
    outdir: BUNDLE_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    plugins: [keepImportMeta],
    logLevel: 'warning',
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
