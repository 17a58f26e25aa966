import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { LOAD_CORE, onCore } from './cores.ts';

export interface LoadOptions {
  /** http://127.0.0.1:<port> (loopback only) */
  origin: string;
  /** request paths, walked in turn */
  paths: string[];
  /** whole seconds with wrk */
  seconds: number;
  connections?: number;
}

export interface LoadResult {
  /** answered requests per second */
  rps: number;
  total: number;
}

/**
 * wrk when it is installed (C, one thread on the load core: it needs far less CPU per request than
 * the server it loads), else autocannon in this process (which bench files pin to the load core).
 */
export const LOAD_TOOL: 'wrk' | 'autocannon' = spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error ? 'autocannon' : 'wrk';

export async function load(opts: LoadOptions): Promise<LoadResult> {
  const url = new URL(opts.origin);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error(`load() only targets loopback, not ${url.hostname}`);
  return LOAD_TOOL === 'wrk' ? wrk(opts) : cannon(opts);
}

async function cannon(opts: LoadOptions): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url: opts.origin,
    connections: opts.connections ?? 32,
    duration: opts.seconds,
    // Each connection starts at a different point of the path list, so tokens spread over connections.
    setupClient: (client) => {
      const start = (next++ * 7919) % opts.paths.length;
      const mine = opts.paths.slice(start).concat(opts.paths.slice(0, start)).slice(0, 256);
      client.setRequests(mine.map((path) => ({ method: 'GET', path })));
    },
  });
  const total = Object.values(result.statusCodeStats ?? {}).reduce((n, v) => n + Number(v.count), 0);
  return { rps: total / result.duration, total };
}

/** wrk with a Lua script that walks the paths and prints its summary as one line. */
async function wrk(opts: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-wrk-'));
  const script = join(dir, 'paths.lua');
  writeFileSync(
    script,
    `local paths = { ${opts.paths.map((p) => JSON.stringify(p)).join(',\n')} }
local i = 0
request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end
done = function(s) io.write(string.format("WRK %d %d %d\\n", s.requests, s.duration, s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout)) end
`,
  );
  const seconds = Math.max(1, Math.round(opts.seconds));
  const [command, args] = onCore(LOAD_CORE, 'wrk', ['-t1', `-c${opts.connections ?? 32}`, `-d${seconds}s`, '-s', script, opts.origin]);
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      proc.stdout.on('data', (b) => (text += b));
      proc.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
    });
    const m = /^WRK (\d+) (\d+) (\d+)$/m.exec(out);
    if (!m) throw new Error(`no summary in wrk's output: ${out}`);
    const [total, micros, errors] = m.slice(1).map(Number);
    if (errors > total / 100) throw new Error(`wrk: ${errors} socket errors for ${total} requests`);
    return { rps: total / (micros / 1e6), total };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
