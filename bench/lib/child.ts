import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiled } from './compiled.ts';
import { onCore } from './cores.ts';
import { PROFILE_DIR } from './options.ts';

export interface ChildOptions {
  args?: string[];
  env?: Record<string, string>;
  /** the core to pin it to (bench/lib/cores.ts) */
  core?: number;
  /** the process under test: profiled when BENCH_CPU_PROF_DIR is set */
  subject?: boolean;
  readyTimeoutMs?: number;
}

export interface Child<T> {
  proc: ChildProcess;
  /** what the child printed on its `READY <json>` line */
  info: T;
  /** asks the child to stop (SIGTERM), waits for it to exit; SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<number | null>;
  /** the child's `DONE <json>` line, printed when it exits after SIGTERM (servers report counts there) */
  done(): Promise<unknown>;
  /** sends one command (a JSON line on its stdin, see `serveCommands`) and waits for its answer */
  call<R>(command: Record<string, unknown>): Promise<R>;
}

/**
 * Runs a file in its own Node process (a .ts file through tsx), so a server under load does not
 * share the load generator's event loop. The child prints `READY {json}` once it serves, may
 * print `DONE {json}` when it stops, and `RESULT {json}` / `ERROR {json}` to answer a command.
 * Anything else it prints goes to our stderr.
 */
export async function startChild<T = Record<string, unknown>>(file: string | URL, opts: ChildOptions = {}): Promise<Child<T>> {
  const profile = opts.subject && PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  let path = file instanceof URL ? fileURLToPath(file) : file;
  // a profiled subject runs compiled, so its profile shows source lines and no tsx loader
  if (profile.length && path.endsWith('.ts')) path = (await compiled(pathToFileURL(path))).file;
  const loader = path.endsWith('.ts') ? ['--import', 'tsx'] : [];
  // node's flags for the process under test only (`BENCH_SUBJECT_NODE_FLAGS='--trace-gc'`): NODE_OPTIONS refuses some, and would reach every process
  const flags = opts.subject ? (process.env.BENCH_SUBJECT_NODE_FLAGS ?? '').split(' ').filter(Boolean) : [];
  const [command, args] = onCore(opts.core, process.execPath, [...profile, ...flags, ...loader, path, ...(opts.args ?? [])]);
  const proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...opts.env } });
  if (profile.length) console.error(`  (profiling ${path.split('/').pop()} ${opts.args?.[0] ?? ''}: pid ${proc.pid})`);
  let doneValue: unknown;
  const waiting: { resolve(v: unknown): void; reject(e: Error): void }[] = [];
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  exited.then(() => {
    for (const w of waiting.splice(0)) w.reject(new Error(`${path} exited before answering`));
  });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${path} was not ready after ${readyTimeoutMs} ms`));
    }, readyTimeoutMs);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const [tag, json] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
      if (tag === 'READY') {
        clearTimeout(timer);
        resolve({ proc, info: JSON.parse(json) as T, stop, done: () => exited.then(() => doneValue), call });
      } else if (tag === 'DONE') doneValue = JSON.parse(json);
      else if (tag === 'RESULT') waiting.shift()?.resolve(JSON.parse(json));
      else if (tag === 'ERROR') waiting.shift()?.reject(new Error(`${path}: ${JSON.parse(json)}`));
      else if (line) process.stderr.write(`  [${proc.pid}] ${line}\n`);
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${path} exited with ${code} before it was ready`));
    });
  });

  function call<R>(command: Record<string, unknown>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      waiting.push({ resolve: resolve as (v: unknown) => void, reject });
      proc.stdin!.write(`${JSON.stringify(command)}\n`);
    });
  }

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

/**
 * For child scripts: answers the parent's commands one at a time, in order. Stops (after the
 * command in hand, then `close`) on SIGTERM or when stdin closes, and exits normally, so that a
 * `--cpu-prof` profile gets written.
 */
export function serveCommands(handle: (command: Record<string, unknown>) => Promise<unknown>, close: () => Promise<void> = async () => {}): void {
  let queue = Promise.resolve();
  const exit = () => queue.then(close).then(() => process.exit(0));
  process.once('SIGTERM', exit);
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      queue = queue.then(async () => {
        try {
          process.stdout.write(`RESULT ${JSON.stringify(await handle(JSON.parse(line)))}\n`);
        } catch (err) {
          process.stdout.write(`ERROR ${JSON.stringify(err instanceof Error ? err.stack : String(err))}\n`);
        }
      });
    })
    .on('close', exit);
}
