import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_ROOT = join(ROOT, '.test-build');

/** The package's own bin: `dist/` when current, else the sources through tsx (bin/notify.js says how it decides). */
export const BIN = join(ROOT, 'bin/notify.js');

const built = new Map<string, string>();

/**
 * The CLI the tests spawn: src/cli/main.ts bundled once to plain JavaScript and run by plain `node`.
 * A process started through bin/notify.js spends about a second of CPU on tsx (its loader thread,
 * every import resolved through its hooks) before notify runs a line; the suite starts several
 * hundred of them. Tests about the bin itself spawn BIN.
 */
export const cliEntry = (): string => compiledEntry(join(ROOT, 'src/cli/main.ts'), { codeCache: true });

/** started with V8's code cache (code-cache-loader.cjs): its bundle is CommonJS, run by that loader */
const CODE_CACHE_LOADER = join(ROOT, 'test/helpers/code-cache-loader.cjs');

/**
 * Packages that stay imports: native addons (their compiled file is found beside their own sources)
 * and optional modules a package requires only when present.
 */
const KEPT_EXTERNAL = ['better-sqlite3', 'pg-native', 'cloudflare:sockets'];

/** CommonJS packages inside an ES module bundle call require() for node's own modules */
const REQUIRE_BANNER = "import { createRequire as __notifyCreateRequire } from 'node:module'; const require = __notifyCreateRequire(import.meta.url);";

/**
 * A TypeScript entry (the CLI, a child-process fixture) bundled to plain JavaScript with the packages
 * it uses: one file parsed instead of the few thousand modules of its packages, about 0.35 s of CPU
 * to start a notify process instead of 0.75 s. The bundle is named by a hash of the entry, the
 * sources and the lock file, so an edit builds a new one and the test processes of one run share it;
 * it lives two levels under the repository, where dist/cli/ is, so the shipped views and package.json
 * resolve as they do from the sources.
 */
export function compiledEntry(file: string, opts: { codeCache?: boolean } = {}): string {
  const known = built.get(file);
  if (known) return known;
  const hash = createHash('sha256').update(file).update(opts.codeCache ? 'code-cache' : 'esm');
  // this file too: how the bundle is built is part of what it is
  const inputs = [...sourceFiles(join(ROOT, 'src')), file, fileURLToPath(import.meta.url), CODE_CACHE_LOADER, join(ROOT, 'package.json'), join(ROOT, 'package-lock.json'), join(ROOT, 'tsconfig.json')];
  for (const f of inputs.filter((f) => existsSync(f))) hash.update(f).update(readFileSync(f));
  const name = basename(file, '.ts');
  const dir = join(BUILD_ROOT, `${name}-${hash.digest('hex').slice(0, 16)}`);
  const out = join(dir, opts.codeCache ? `${name}.cjs` : `${name}.mjs`);
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    // test processes start side by side, each wanting the same bundle: one builds it while the others
    // wait for it (a builder that died leaves its lock, and after a while the waiter builds)
    if (!waitForOtherBuilder(join(dir, 'building'), out)) {
      // each builds under its own name and renames, which is atomic
      const tmp = `${out}.${process.pid}.tmp.mjs`;
      try {
        if (opts.codeCache) buildCodeCached(file, out, tmp);
        else buildSync({ entryPoints: [file], outfile: tmp, bundle: true, platform: 'node', format: 'esm', target: 'node20', external: KEPT_EXTERNAL, banner: { js: REQUIRE_BANNER }, logLevel: 'warning' });
        renameSync(tmp, out);
      } finally {
        rmSync(join(dir, 'building'), { force: true });
      }
      pruneOldBuilds(name, dir);
    }
  }
  built.set(file, out);
  return out;
}

/**
 * `file` as a CommonJS bundle beside `out` and the loader at `tmp` (renamed to `out` by the caller,
 * last, so a process that sees `out` finds the bundle too). Strict, as the ES module bundle was; each
 * module's import.meta.url is the bundle's, as in that bundle; dynamic imports go through the loader.
 */
function buildCodeCached(file: string, out: string, tmp: string): void {
  const bundle = out.replace(/\.cjs$/, '.bundle.cjs');
  const banner = "'use strict'; var __notifyImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";
  const { outputFiles } = buildSync({ entryPoints: [file], write: false, outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: KEPT_EXTERNAL, define: { 'import.meta.url': '__notifyImportMetaUrl' }, banner: { js: banner }, logLevel: 'warning' });
  writeFileSync(`${bundle}.${process.pid}`, asciiOnly(outputFiles[0].text.replaceAll('await import(', 'await __notifyImport(')));
  renameSync(`${bundle}.${process.pid}`, bundle);
  copyFileSync(CODE_CACHE_LOADER, tmp);
}

/**
 * The bundle with every character outside ASCII written as a \u escape. esbuild escapes them in
 * strings but leaves them in regular expressions and comments of the packages (a hundred lines of 8 MB),
 * and one such character makes node decode the whole file as UTF-8 into a two-byte string at every
 * start: `campaigns:list` used 0.30 s of CPU, 0.27 s with the escapes (median of 10 interleaved pairs,
 * loaded machine). A \u escape means the same character in a string, a regular expression, an
 * identifier or a comment; one per UTF-16 unit, so a character beyond the BMP is its surrogate pair.
 */
function asciiOnly(text: string): string {
  // after a backslash the escape would change what that backslash escapes: left as it is (only slower)
  if (/\\[^\x00-\x7f]/.test(text)) return text;
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Takes the build lock and returns false (build it yourself), or, when another process holds it,
 * waits until that one's bundle is there and returns true. Synchronous, as the callers are: a few
 * seconds once per test process at most.
 */
function waitForOtherBuilder(lock: string, out: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return false;
  } catch {
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    // generous: a build takes seconds, several on a loaded machine
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (existsSync(out)) return true;
      Atomics.wait(sleeper, 0, 0, 100);
    }
    return false;
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

/** Bundles of the entry from earlier sources, once no test run of the last hour can still be using them. */
function pruneOldBuilds(name: string, keep: string): void {
  for (const entry of readdirSync(BUILD_ROOT)) {
    const dir = join(BUILD_ROOT, entry);
    if (entry.startsWith(`${name}-`) && dir !== keep && Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
  }
}
