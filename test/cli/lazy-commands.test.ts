import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { BIN } from '../helpers/compiled-entry.ts';

const exec = promisify(execFile);
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
// the bin runs dist/ when a build is there and current (a clean clone after `npm ci`), else src/ through tsx
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'notify-lazy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// A module hook, registered before the bin registers tsx's, sees every ES module the process loads
// (notify's sources are ES modules) and writes its URL to the file NOTIFY_TEST_LOADED names.
writeFileSync(
  join(dir, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, nextLoad) {
  appendFileSync(process.env.NOTIFY_TEST_LOADED, url + '\\n');
  return nextLoad(url, context);
}
`,
);
writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k)));

/** The files of notify (src/, or dist/ named as their sources) that `notify <args>` loaded, run as a deployment runs it (bin/notify.js). */
async function sourcesLoaded(args: string[]): Promise<string[]> {
  const list = join(dir, `loaded-${args.join('_').replace(/\W/g, '-')}.txt`);
  writeFileSync(list, '');
  await exec(process.execPath, ['--import', join(dir, 'register.mjs'), BIN, ...args], {
    cwd: dir,
    env: { ...env, NOTIFY_TEST_LOADED: list, NOTIFY_DATABASE: `sqlite:${join(dir, 'notify.db')}` },
    timeout: 120_000,
  }).catch((e: { code: number }) => assert.ok(args[0] === 'bogus' && e.code === 1, `notify ${args.join(' ')}: ${String(e)}`));
  const under = (root: string) => (url: string) => url.startsWith(pathToFileURL(root).href);
  const urls = readFileSync(list, 'utf8').split('\n');
  return [
    ...urls.filter(under(SRC)).map((url) => relative(SRC, fileURLToPath(url))),
    // a built file named as its source: dist/cli/main.js is cli/main.ts
    ...urls.filter(under(DIST)).map((url) => relative(DIST, fileURLToPath(url)).replace(/\.js$/, '.ts')),
  ];
}

/** what a command's definition may load: commander, the error codes, the "did you mean" helper, plain types */
const DEFINITIONS = /^(cli\/main\.ts|cli\/commands\/[a-z-]+(?<!-run)\.ts|errors\.ts|closest-name\.ts|core\/types\.ts)$/;

test('--version, --help, a command\'s help and a mistyped command load no command\'s implementation', async () => {
  for (const args of [['--version'], ['--help'], ['help', 'serve'], ['notify:send-campaign', '--help'], ['bogus']]) {
    const loaded = await sourcesLoaded(args);
    assert.ok(loaded.includes('cli/main.ts'), `notify ${args.join(' ')} is seen loading main.ts: ${loaded.join(', ')}`);
    assert.deepEqual(
      loaded.filter((f) => !DEFINITIONS.test(f)),
      [],
      `notify ${args.join(' ')} loaded these beyond the commands' definitions`,
    );
  }
});

test('a command that runs loads its own implementation and not the others\'', async () => {
  const loaded = await sourcesLoaded(['migrate']);
  assert.ok(loaded.includes('cli/commands/migrate-run.ts'), loaded.join(', '));
  assert.ok(loaded.includes('store/index.ts'), loaded.join(', '));
  // the schema needs the configuration and the store, not the instance with its mail, rendering and HTTP
  assert.ok(!loaded.includes('notify.ts'), loaded.join(', '));
  assert.deepEqual(
    loaded.filter((f) => f.startsWith('cli/commands/') && f.endsWith('-run.ts') && f !== 'cli/commands/migrate-run.ts'),
    [],
  );
});
