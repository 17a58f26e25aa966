import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { PROFILE_DIR } from './options.ts';

export const BUILD_ROOT = fileURLToPath(new URL('../../.bench-build', import.meta.url));

/**
 * A bench process as a user runs notify: plain JavaScript under plain `node`. Under tsx, a
 * process carries tsx's module loader (a second V8 isolate, ~45 MB of RSS, and loader frames in
 * every profile), and tsx's output keeps no line numbers a profile could show. The entry is
 * bundled with esbuild (packages left as imports, so they resolve from the repository's
 * node_modules; a source map beside it, which bench/lib/profile.ts reads) into
 * `.bench-build/<pid>/`: two levels under the repository, where dist/render/ is, so the shipped
 * views resolve the same way. While profiling, the bundles stay until bench/run.ts has printed
 * the profiles (`removeBuilds`).
 */
export async function compiled(entry: URL): Promise<{ file: string; remove(): void }> {
  const dir = join(BUILD_ROOT, String(process.pid));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, basename(fileURLToPath(entry)).replace(/\.ts$/, '.mjs'));
  await build({ entryPoints: [fileURLToPath(entry)], outfile: file, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', sourcemap: 'linked', logLevel: 'warning' });
  return {
    file,
    remove() {
      if (PROFILE_DIR) return;
      rmSync(dir, { recursive: true, force: true });
      // another bench run in this checkout may have removed the whole folder already (removeBuilds)
      if (existsSync(BUILD_ROOT) && readdirSync(BUILD_ROOT).length === 0) rmSync(BUILD_ROOT, { recursive: true, force: true });
    },
  };
}

export function removeBuilds(): void {
  rmSync(BUILD_ROOT, { recursive: true, force: true });
}
