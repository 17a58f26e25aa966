import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, startChild } from './child.ts';
import { compiled } from './compiled.ts';
import { SUBJECT_CORE } from './cores.ts';

/** What bench/servers/send-worker.ts answers for a timed command. */
export interface SendRun {
  sent: number;
  failed: number;
  ms: number;
  cpuMs: number;
  /** process.memoryUsage() in MB every 200 ms through the timed part, when asked for (`memory`) */
  memory?: MemorySample[];
}

export interface MemorySample {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface SendWorker {
  child: Child<{ pid: number }>;
  seed(n: number, list?: string): Promise<void>;
  /** `collect`: a full garbage collection just before the timed part (bench/servers/send-worker.ts); `memory`: sample it */
  campaign(list?: string, opts?: { collect?: boolean; memory?: boolean }): Promise<SendRun>;
  drips(list?: undefined, opts?: { collect?: boolean }): Promise<SendRun>;
  stop(): Promise<void>;
}

/**
 * notify sending from its own process on the subject core (profiled with --cpu-prof), on
 * `database` or a fresh SQLite file; `compiledJs` runs it as plain JavaScript (bench/lib/compiled.ts).
 */
export async function startSendWorker(smtpUrl: string, database?: string, compiledJs = false): Promise<SendWorker> {
  const dir = database ? undefined : mkdtempSync(join(tmpdir(), 'notify-bench-send-'));
  const source = new URL('../servers/send-worker.ts', import.meta.url);
  const js = compiledJs ? await compiled(source) : undefined;
  const child = await startChild<{ pid: number }>(js?.file ?? source, { args: [database ?? `sqlite:${join(dir!, 'notify.db')}`, smtpUrl], core: SUBJECT_CORE, subject: true });
  const run = (what: string) => async (list?: string, opts: { collect?: boolean; memory?: boolean } = {}) => {
    const r = await child.call<SendRun>({ do: what, list, collect: opts.collect === true, memory: opts.memory === true });
    if (r.failed > 0) throw new Error(`${what}: ${r.failed} of ${r.sent + r.failed} failed`);
    return r;
  };
  return {
    child,
    seed: async (n, list) => void (await child.call({ do: 'seed', n, list })),
    campaign: run('campaign'),
    drips: run('drips'),
    async stop() {
      await child.stop(60_000);
      js?.remove();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The nodemailer baselines from their own process on the subject core. */
export async function startNodemailerWorker(smtpUrl: string) {
  const child = await startChild(new URL('../servers/nodemailer-worker.ts', import.meta.url), { args: [smtpUrl], core: SUBJECT_CORE });
  return {
    rate: async (what: 'raw' | 'same' | 'html', n: number) => (await child.call<{ rate: number }>({ do: what, n })).rate,
    stop: async () => void (await child.stop()),
  };
}
