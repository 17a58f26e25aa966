// The mutation run's bundles (scripts/mutation-bundle.mjs): code in a bundle still finds its files from where
// its source lives, and text that only mentions import.meta is left as it is.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { bundleFor } from '../scripts/mutation-bundle-path.mjs';
import { bundleTests } from '../scripts/mutation-bundle.mjs';

test("a bundled module's import.meta is its source file's; a string that names import.meta.url stays as written", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-mutation-bundle-'));
  try {
    mkdirSync(join(dir, 'test/helpers'), { recursive: true });
    const helper = join(dir, 'test/helpers/where.ts');
    writeFileSync(
      helper,
      [
        // the CLI bundle's banner is such a string: replaced inside the quotes it no longer parses
        `export const banner: string = "const require = createRequire(import.meta.url);";`,
        `export const quoted: string = 'import.meta.dirname and import.meta.filename';`,
        'export const where = { url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename };',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'test/a.test.ts'), `export * from './helpers/where.ts';\n`);
    await bundleTests(['test/a.test.ts'], { cwd: dir });
    const bundled = await import(pathToFileURL(join(dir, bundleFor('test/a.test.ts'))).href);
    assert.equal(bundled.banner, 'const require = createRequire(import.meta.url);');
    assert.equal(bundled.quoted, 'import.meta.dirname and import.meta.filename');
    assert.deepEqual(bundled.where, { url: pathToFileURL(helper).href, dirname: join(dir, 'test/helpers'), filename: helper });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
