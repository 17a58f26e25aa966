import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEntry } from '../../helpers/compiled-entry.ts';

export interface CliRun {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** resolves with the exit code (or -1 when killed by a signal) */
  exited: Promise<number>;
}

/**
 * The real `notify` CLI in its own process, configured by a config file in a temp working folder
 * (so no stray notify.config.json or NOTIFY_* variable of the test's own shell leaks in).
 */
export class CliEnv {
  readonly dir = mkdtempSync(join(tmpdir(), 'notify-rel-'));
  constructor(config: Record<string, unknown>) {
    writeFileSync(join(this.dir, 'notify.config.json'), JSON.stringify({ logLevel: 'warn', ...config }, null, 2));
  }

  start(args: string[], env: Record<string, string> = {}): CliRun {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k)));
    const proc = spawn(process.execPath, [cliEntry(), ...args], { cwd: this.dir, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout!.on('data', (c) => {
      out += c;
    });
    proc.stderr!.on('data', (c) => {
      err += c;
    });
    const exited = new Promise<number>((resolve) => proc.on('exit', (code) => resolve(code ?? -1)));
    return { proc, stdout: () => out, stderr: () => err, exited };
  }

  /** runs to completion; rejects when it takes longer than timeoutMs */
  async run(args: string[], timeoutMs = 60_000, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const r = this.start(args, env);
    const timer = setTimeout(() => r.proc.kill('SIGKILL'), timeoutMs);
    const code = await r.exited;
    clearTimeout(timer);
    return { code, stdout: r.stdout(), stderr: r.stderr() };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `check` until it returns a value other than undefined (rejects after timeoutMs). */
export async function waitUntil<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
