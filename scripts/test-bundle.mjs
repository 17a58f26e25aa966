// The test files as plain JavaScript, built once per run for scripts/test.mjs. A test process started
// with tsx spends about two seconds of CPU resolving and loading the sources through its hooks before
// its first test (more than many files then use); the suite starts one process per file. esbuild
// builds every file in one pass, the code they share split into common chunks, the packages left as
// imports resolved from the repository's node_modules, and plain `node` runs them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.js': 'js', '.mjs': 'js' };

/**
 * Each module keeps its own import.meta: a bundled module would otherwise see the bundle's, and the
 * sources find the shipped views, fixtures and the repository root from where they are. esbuild's
 * define replaces the expressions (never the same words in a string); its inline source map keeps
 * the lines pointing at the source.
 */
const ownImportMeta = (transform, tsconfigRaw) => ({
  name: 'own-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      const loader = LOADERS[extname(args.path)] ?? 'js';
      if (!text.includes('import.meta')) return { contents: text, loader };
      const define = {
        'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
        'import.meta.dirname': JSON.stringify(dirname(args.path)),
        'import.meta.filename': JSON.stringify(args.path),
      };
      const out = await transform(text, { loader, define, format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: args.path, tsconfigRaw });
      return { contents: out.code, loader: 'js' };
    });
  },
});

/**
 * Builds `files` (paths from `root`) into `outdir`; resolves with a map from each built file to its
 * source, both absolute. Throws esbuild's error when a file does not build (a syntax error, an import
 * of a missing file), which the runner reports before any test runs.
 */
export async function bundleTests(root, files, outdir) {
  const { build, transform } = await import('esbuild');
  const tsconfig = join(root, 'tsconfig.json');
  const tsconfigRaw = existsSync(tsconfig) ? JSON.parse(readFileSync(tsconfig, 'utf8')) : {};
  const entryPoints = files.map((f) => resolve(root, f));
  await build({
    entryPoints,
    outdir,
    outbase: root,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [ownImportMeta(transform, tsconfigRaw)],
  });
  return new Map(entryPoints.map((f) => [join(outdir, relative(root, f)).replace(/\.[cm]?[jt]s$/, '.mjs'), f]));
}
