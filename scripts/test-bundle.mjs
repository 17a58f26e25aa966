// The test files as plain JavaScript, built once per run for scripts/test.mjs. A test process started
// with tsx spends about two seconds of CPU resolving and loading the sources through its hooks before
// its first test (more than many files then use); the suite starts one process per file. esbuild
// builds every file in one pass, the code they share split into common chunks, the packages inside
// them too (but for the few in KEPT_EXTERNAL), and plain `node` runs them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { trimSourceMaps } from './test-source-maps.mjs';

const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.js': 'js', '.mjs': 'js' };

/**
 * Packages that stay imports resolved from node_modules. Every test process loads notify's packages
 * (the helpers start an instance and an SMTP sink): module by module, node resolves, reads and
 * links a few thousand files, about 0.4 s of CPU per test file more than the same code bundled (a
 * file that starts one notify on SQLite: 1.21 s against 0.73 s of CPU, loaded machine), as the CLI the
 * tests spawn is bundled (test/helpers/compiled-entry.ts). Kept: native addons and optional modules
 * (as the CLI keeps them), and tools that find files of their own beside their code or start their
 * own binaries or workers (a browser driver, a bundler, the compiler, servers compared in the bench).
 */
const KEPT_EXTERNAL = [
  'better-sqlite3',
  'pg-native',
  'cloudflare:sockets',
  'esbuild',
  'playwright-core',
  'typescript',
  'tsx',
  '@biomejs/biome',
  '@stryker-mutator/core',
  '@stryker-mutator/tap-runner',
  '@seriousme/openapi-schema-validator',
  'autocannon',
  'fastify',
  'express',
].flatMap((name) => [name, `${name}/*`]);

/** CommonJS packages inside an ES module bundle call require() for node's own modules */
const REQUIRE_BANNER = "import { createRequire as __notifyCreateRequire } from 'node:module'; const require = __notifyCreateRequire(import.meta.url);";

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
    external: KEPT_EXTERNAL,
    banner: { js: REQUIRE_BANNER },
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [ownImportMeta(transform, tsconfigRaw)],
  });
  trimSourceMaps(outdir);
  return new Map(entryPoints.map((f) => [join(outdir, relative(root, f)).replace(/\.[cm]?[jt]s$/, '.mjs'), f]));
}
