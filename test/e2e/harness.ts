import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import { cliEntry } from '../helpers/compiled-entry.ts';
import { ENGINES, type Engine, freshDatabaseUrl } from '../helpers/engines.ts';
import { type SinkOptions, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { waitUntil } from '../reliability/helpers/processes.ts';
import { dropDatabase } from './database.ts';

export { waitUntil };

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * describe(`<title> [<engine>]`) once per engine, the engines side by side, each one's tests still one
 * after another in their order. A deployment's case mostly waits (a scheduled time, a throttle, a
 * worker's round, a process starting), so the second engine's deployment waits at the same time as the
 * first's instead of after it; each has its own database, SMTP sink, folder and port.
 */
export function describeEachEngine(title: string, suite: (engine: Engine) => void, options: { skip?: string | boolean } = {}): void {
  describe(`${title} (${ENGINES.join(' and ')} side by side)`, { concurrency: true, ...options }, () => {
    for (const engine of ENGINES) describe(`${title} [${engine}]`, { concurrency: 1 }, () => suite(engine));
  });
}

/** A port nobody listens on right now (the kernel's pick, released at once for the process to bind). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One `notify` process: its output kept for assertions and failure messages, stopped like a service manager would. */
export class NotifyProcess {
  private out = '';
  private err = '';
  readonly exited: Promise<number>;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    proc.stdout!.on('data', (c) => {
      this.out += c;
    });
    proc.stderr!.on('data', (c) => {
      this.err += c;
    });
    this.exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code ?? -1)));
  }

  get stdout(): string {
    return this.out;
  }

  /** what the process said so far, for an assertion message */
  describe(): string {
    return `--- ${this.name} stdout ---\n${this.out.slice(-4000)}\n--- ${this.name} stderr ---\n${this.err.slice(-4000)}`;
  }

  /** the first match of `pattern` in stdout; rejects when the process exits or the time runs out first */
  async waitForOutput(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
    let gone = false;
    this.exited.then(() => {
      gone = true;
    });
    try {
      return await waitUntil(
        () => {
          const m = this.out.match(pattern);
          if (m) return m;
          if (gone) throw new Error(`${this.name} exited before printing ${pattern}`);
          return undefined;
        },
        timeoutMs,
        `${pattern} from ${this.name}`,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${this.describe()}`);
    }
  }

  /** SIGTERM, then SIGKILL when it has not exited within graceMs; resolves with the exit code */
  async stop(graceMs = 5_000): Promise<number> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

export interface DeploymentOptions {
  /** options of notify.config.json beside the defaults below; false writes no config file */
  config?: Record<string, unknown> | false;
  /** the text of the working folder's .env file */
  envFile?: string;
  /** how the SMTP sink is set up (STARTTLS, AUTH) */
  sink?: SinkOptions;
}

/**
 * A working folder as a deployment has one: notify.config.json (string options only) and/or a
 * .env file, a fresh database of the engine, and a real SMTP server (the sink, in this process)
 * as its mailer. Every notify process runs from that folder with no notify option in its
 * environment, so only the files configure it.
 */
export class Deployment {
  readonly dir = mkdtempSync(join(tmpdir(), 'notify-e2e-'));
  private readonly processes: NotifyProcess[] = [];

  private constructor(
    readonly engine: Engine,
    readonly database: string,
    private readonly cleanup: () => void,
    readonly sink: SmtpSink,
    /** the port `serve()` binds, known up front so baseUrl can name it */
    readonly port: number,
  ) {}

  static async open(engine: Engine, opts: DeploymentOptions = {}): Promise<Deployment> {
    const db = freshDatabaseUrl(engine);
    const d = new Deployment(engine, db.url, db.cleanup, await startSmtpSink(opts.sink), await freePort());
    if (opts.config !== false) d.writeConfig('notify.config.json', { ...d.defaults(), ...opts.config });
    if (opts.envFile !== undefined) writeFileSync(join(d.dir, '.env'), opts.envFile);
    return d;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** what every deployment here sets: its database, the sink as mailer, a sender, the serve address */
  defaults(): Record<string, string> {
    return { database: this.database, mailer: this.sink.url, fromEmail: 'news@example.com', baseUrl: this.baseUrl, logLevel: 'warn' };
  }

  writeConfig(name: string, values: Record<string, unknown>): void {
    writeFileSync(join(this.dir, name), JSON.stringify(values, null, 2));
  }

  writeFile(name: string, text: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, text);
    return path;
  }

  /** `notify <args>` in the folder (the compiled CLI, see cliEntry); `shell` runs it through /bin/sh -c as npm scripts and npx do */
  spawn(args: string[], opts: { env?: Record<string, string>; shell?: boolean; name?: string } = {}): NotifyProcess {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k)));
    const env = { ...inherited, ...opts.env };
    const argv = [process.execPath, cliEntry(), ...args];
    const proc = opts.shell
      ? spawn('/bin/sh', ['-c', argv.map(shellQuote).join(' ')], { cwd: this.dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(argv[0], argv.slice(1), { cwd: this.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const p = new NotifyProcess(opts.name ?? `notify ${args.join(' ')}`.slice(0, 80), proc);
    this.processes.push(p);
    return p;
  }

  /** runs a command to its end (killed after timeoutMs) */
  async run(args: string[], opts: { env?: Record<string, string>; shell?: boolean; timeoutMs?: number } = {}): Promise<CliResult> {
    const p = this.spawn(args, opts);
    const timer = setTimeout(() => p.proc.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    const code = await p.exited;
    clearTimeout(timer);
    return { code, stdout: p.stdout, stderr: p.describe() };
  }

  /** runs a command that must succeed; its stdout */
  async cli(args: string[], opts: { env?: Record<string, string>; shell?: boolean } = {}): Promise<string> {
    const r = await this.run(args, opts);
    if (r.code !== 0) throw new Error(`notify ${args.join(' ')} exited ${r.code}\n${r.stderr}`);
    return r.stdout;
  }

  /** `notify serve` on `port` (default: the deployment's), resolved once it says it listens */
  async serve(opts: { port?: number; config?: string; env?: Record<string, string>; name?: string } = {}): Promise<{ url: string; process: NotifyProcess }> {
    const port = opts.port ?? this.port;
    const global = opts.config ? ['--config', opts.config] : [];
    const p = this.spawn([...global, 'serve', '--port', String(port), '--host', '127.0.0.1'], { env: opts.env, name: opts.name ?? 'serve' });
    // a process that fails to start exits and fails this at once; the time limit is for a starved one
    const m = await p.waitForOutput(/listening on (http:\/\/\S+)/, 90_000);
    return { url: m[1], process: p };
  }

  /** `notify worker --interval <seconds>`, resolved once it has started */
  async worker(intervalSeconds: number): Promise<NotifyProcess> {
    const p = this.spawn(['worker', '--interval', String(intervalSeconds)], { name: 'worker' });
    await p.waitForOutput(/notify worker: started/, 90_000);
    return p;
  }

  /** every process's output, for a failed assertion's message */
  describe(): string {
    return this.processes.map((p) => p.describe()).join('\n');
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop()));
    await this.sink.close();
    await dropDatabase(this.database, this.cleanup);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
