import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_ROOT = join(ROOT, '.test-build');

/** The package's own bin: TypeScript through tsx, exactly as a deployment starts it. */
export const BIN = join(ROOT, 'bin/notify.js');

let entry: string | undefined;

/**
 * The CLI the tests spawn: src/cli/main.ts bundled once to plain JavaScript (packages left as imports,
 * resolved from the repository's node_modules) and run by plain `node`. A process started through
 * bin/notify.js spends about a second of CPU on tsx (its loader thread, every import resolved through
 * its hooks) before notify runs a line; the suite starts over a hundred of them. The bundle is named
 * by a hash of the sources, so an edit builds a new one and the test processes of one run share it;
 * it lives two levels under the repository, where dist/cli/ is, so the shipped views and
 * package.json resolve as they do from the sources. Tests about the bin itself spawn BIN.
 */
export function cliEntry(): string {
  if (entry) return entry;
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(join(ROOT, 'src')), join(ROOT, 'package.json'), join(ROOT, 'tsconfig.json')]) hash.update(file).update(readFileSync(file));
  const dir = join(BUILD_ROOT, hash.digest('hex').slice(0, 16));
  const file = join(dir, 'main.mjs');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // test processes run side by side: each builds under its own name and renames, which is atomic
    const tmp = join(dir, `main.${process.pid}.tmp.mjs`);
    buildSync({ entryPoints: [join(ROOT, 'src/cli/main.ts')], outfile: tmp, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
    renameSync(tmp, file);
    pruneOldBuilds(dir);
  }
  entry = file;
  return file;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

/** Bundles of earlier sources, once no test run of the last hour can still be using them. */
function pruneOldBuilds(keep: string): void {
  for (const name of readdirSync(BUILD_ROOT)) {
    const dir = join(BUILD_ROOT, name);
    if (dir !== keep && Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
  }
}
