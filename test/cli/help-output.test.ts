import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cliEntry } from '../helpers/compiled-entry.ts';

const exec = promisify(execFile);

/**
 * What `notify` prints for help and for command lines it refuses, byte for byte, as captured from the
 * CLI that loaded every command's modules at start: the commands now load theirs only when they run,
 * and a user must not see a difference. After a deliberate change to a command's help, rewrite the
 * file with NOTIFY_TEST_WRITE_EXPECTED=1 and read its diff.
 */
const EXPECTED = fileURLToPath(new URL('./help-output.expected.txt', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'notify-help-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** no notify settings and no PORT from the caller's shell: `serve --help` shows PORT as its default */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k) && k !== 'PORT'));

async function run(args: string[]): Promise<string> {
  const r = await exec(process.execPath, [cliEntry(), ...args], { cwd: dir, env, timeout: 60_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  const shown = (s: string) => s.replaceAll(dir, '<dir>');
  return `$ notify ${args.join(' ')}\n[exit ${r.code}]\n--- stdout\n${shown(r.stdout)}--- stderr\n${shown(r.stderr)}`;
}

/** command lines refused before any database is opened, each with its message and exit code */
const REFUSED = [
  [],
  ['bogus'],
  ['send-campaign', '1'],
  ['sendcampaign'],
  ['help', 'bogus'],
  ['notify:send-campaign'],
  ['notify:send-campaign', 'abc'],
  ['campaigns:schedule', '1'],
  ['serve', '--bogus'],
  ['serve', '--port', 'x'],
  ['serve', '--workers', '0'],
  ['worker', '--interval', '0'],
  ['demo', '--port', '99999'],
  ['contacts:import', 'missing.csv'],
  ['contacts:import', '--encoding'],
  ['stats', '1'],
  ['campaigns:create'],
];

/** the commands `notify --help` lists */
function commandNames(help: string): string[] {
  const section = help.slice(help.indexOf('Commands:'));
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((name) => name !== 'help');
}

test('help of notify and of every command, and refused command lines, print what they printed when every command loaded at start', async () => {
  const top = await run(['--help']);
  const names = commandNames(top);
  assert.ok(names.length >= 16, `commands listed by --help: ${names.join(', ')}`);
  const parts = [await run(['--version']), top, await run(['help'])];
  for (const name of names) {
    const viaFlag = await run([name, '--help']);
    const viaHelp = await run(['help', name]);
    // the two spellings print the same text; only the command line shown differs
    assert.equal(viaHelp.slice(viaHelp.indexOf('\n')), viaFlag.slice(viaFlag.indexOf('\n')), `notify help ${name}`);
    parts.push(viaFlag);
  }
  for (const args of REFUSED) parts.push(await run(args));
  const actual = parts.join('\n');
  if (process.env.NOTIFY_TEST_WRITE_EXPECTED) writeFileSync(EXPECTED, actual);
  assert.equal(actual, readFileSync(EXPECTED, 'utf8'));
});
