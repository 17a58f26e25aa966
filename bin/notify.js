#!/usr/bin/env node
// The CLI: the compiled JavaScript of dist/ when it is current, else the TypeScript sources through tsx
// (tsx transpiles every source at start unless its cache in the temp folder has them).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// node runs a bin by its real path: a link into a checkout (`npm link`, a `file:` dependency) is that checkout
const root = fileURLToPath(new URL('../', import.meta.url));
const compiled = join(root, 'dist/cli/main.js');

/**
 * Whether dist/ may run. An installed package (under a node_modules folder, whatever the package manager
 * and the mtimes it gives the files): whenever dist/ is there, as the library's import does. Elsewhere (a
 * checkout, or a tarball unpacked by hand): only when no file under src/ changed after dist/cli/main.js
 * was written (an edit moves the file's mtime, `git checkout`/`git pull` write the files they change), so
 * someone editing the sources never runs an older build. Files only: tar dates the folders it creates at
 * extraction but keeps the tarball's date on files, the same for src/ and dist/.
 */
function compiledIsCurrent() {
  let built;
  try {
    built = statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
  if (root.split(sep).includes('node_modules')) return true;
  const src = join(root, 'src');
  // a copy slimmed to what runs (no sources) has nothing newer
  if (!existsSync(src)) return true;
  return readdirSync(src, { recursive: true }).every((entry) => {
    const stat = statSync(join(src, entry));
    return stat.isDirectory() || stat.mtimeMs <= built;
  });
}

if (compiledIsCurrent()) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
