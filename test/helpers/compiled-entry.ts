import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_ROOT = join(ROOT, '.test-build');

/** The package's own bin: TypeScript through tsx, exactly as a deployment starts it. */
export const BIN = join(ROOT, 'bin/notify.js');

const built = new Map<string, string>();

/**
 * The CLI the tests spawn: src/cli/main.ts bundled once to plain JavaScript and run by plain `node`.
 * A process started through bin/notify.js spends about a second of CPU on tsx (its loader thread,
 * every import resolved through its hooks) before notify runs a line; the suite starts over a
 * hundred of them. Tests about the bin itself spawn BIN.
 */
export const cliEntry = (): string => compiledEntry(join(ROOT, 'src/cli/main.ts'));

/**
 * A TypeScript entry (the CLI, a child-process fixture) bundled to plain JavaScript, packages left as
 * imports resolved from the repository's node_modules. The bundle is named by a hash of the entry
 * and the sources, so an edit builds a new one and the test processes of one run share it; it lives
 * two levels under the repository, where dist/cli/ is, so the shipped views and package.json resolve
 * as they do from the sources.
 */
export function compiledEntry(file: string): string {
  const known = built.get(file);
  if (known) return known;
  const hash = createHash('sha256').update(file);
  for (const f of [...sourceFiles(join(ROOT, 'src')), file, join(ROOT, 'package.json'), join(ROOT, 'tsconfig.json')]) hash.update(f).update(readFileSync(f));
  const name = basename(file, '.ts');
  const dir = join(BUILD_ROOT, `${name}-${hash.digest('hex').slice(0, 16)}`);
  const out = join(dir, `${name}.mjs`);
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    // test processes run side by side: each builds under its own name and renames, which is atomic
    const tmp = `${out}.${process.pid}.tmp.mjs`;
    buildSync({ entryPoints: [file], outfile: tmp, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
    renameSync(tmp, out);
    pruneOldBuilds(name, dir);
  }
  built.set(file, out);
  return out;
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
