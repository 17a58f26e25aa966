import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);

export interface RunnerProject {
  dir: string;
  /** writes package.json with these check scripts */
  project(typecheck: string): void;
  /** `node scripts/test.mjs <args>` in the project: its exit code (null when killed after 180 s) and output */
  run(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  remove(): void;
}

/**
 * scripts/test.mjs in a throwaway project of its own (the runner's scripts copied, node_modules
 * linked), so its checks are that project's npm scripts: what `npm test` exits with and prints.
 */
export function runnerProject(): RunnerProject {
  const dir = mkdtempSync(join(tmpdir(), 'notify-runner-'));
  mkdirSync(join(dir, 'test'));
  mkdirSync(join(dir, 'scripts'));
  for (const name of readdirSync(join(ROOT, 'scripts')).filter((n) => /^test.*\.mjs$/.test(n))) cpSync(join(ROOT, 'scripts', name), join(dir, 'scripts', name));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return {
    dir,
    project: (typecheck) => writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'p', type: 'module', scripts: { typecheck, lint: 'echo lint ran' } })),
    run: (...args) =>
      // without the variable node:test sets for the files it runs, the runner is a top-level run again
      exec(process.execPath, ['scripts/test.mjs', ...args], { cwd: dir, timeout: 180_000, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT')) }).then(
        (r) => ({ code: 0, ...r }),
        (err: { code: number | null; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
      ),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
