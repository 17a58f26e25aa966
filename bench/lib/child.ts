import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Child<T> {
  proc: ChildProcess;
  /** what the child printed on its `READY <json>` line */
  info: T;
  /** asks the child to stop (SIGTERM), waits for it to exit; SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<number | null>;
  /** the child's `DONE <json>` line, printed when it exits after SIGTERM (servers report counts there) */
  done(): Promise<unknown>;
}

/**
 * Runs a TypeScript file in its own Node process (through tsx), so a server under load does not
 * share the load generator's event loop. The child prints `READY {json}` once it serves, and may
 * print `DONE {json}` when it stops. Anything else it prints goes to our stderr.
 */
export function startChild<T = Record<string, unknown>>(file: string | URL, args: string[] = [], env: Record<string, string> = {}, readyTimeoutMs = 30_000): Promise<Child<T>> {
  const path = file instanceof URL ? fileURLToPath(file) : file;
  const proc = spawn(process.execPath, ['--import', 'tsx', path, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  let doneValue: unknown;
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${path} was not ready after ${readyTimeoutMs} ms`));
    }, readyTimeoutMs);
    let buf = '';
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (chunk: string) => {
      buf += chunk;
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
        if (line.startsWith('READY ')) {
          clearTimeout(timer);
          resolve({ proc, info: JSON.parse(line.slice(6)) as T, stop, done: () => exited.then(() => doneValue) });
        } else if (line.startsWith('DONE ')) doneValue = JSON.parse(line.slice(5));
        else if (line) process.stderr.write(`  [${proc.pid}] ${line}\n`);
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${path} exited with ${code} before it was ready`));
    });
  });

  async function stop(graceMs = 10_000): Promise<number | null> {
    if (proc.exitCode !== null || proc.signalCode !== null) return exited;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }
}

/** For child scripts: announce readiness to the parent. */
export function ready(info: Record<string, unknown>): void {
  process.stdout.write(`READY ${JSON.stringify(info)}\n`);
}

/** For child scripts: report final figures to the parent just before exiting. */
export function done(info: Record<string, unknown>): void {
  process.stdout.write(`DONE ${JSON.stringify(info)}\n`);
}
