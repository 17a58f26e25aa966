import { type Child, startChild } from './child.ts';
import { LOAD_CORE } from './cores.ts';

export interface SinkStats {
  messages: number;
  recipients: number;
  duplicates: number;
}

export interface RemoteSink {
  url: string;
  stats(): Promise<SinkStats>;
  reset(): Promise<SinkStats>;
  /** arrival time (epoch ms) of every message since the last reset */
  times(): Promise<number[]>;
  /** resolves once `n` messages arrived (rejects after timeoutMs) */
  waitFor(n: number, timeoutMs?: number): Promise<SinkStats>;
  stop(): Promise<void>;
}

/** Starts bench/servers/smtp-sink.ts in its own process, on the load generator's core. */
export async function startRemoteSink(): Promise<RemoteSink> {
  const child: Child<{ port: number; control: number }> = await startChild(new URL('../servers/smtp-sink.ts', import.meta.url), { core: LOAD_CORE });
  const control = `http://127.0.0.1:${child.info.control}`;
  const stats = async () => (await (await fetch(`${control}/stats`)).json()) as SinkStats;
  return {
    url: `smtp://127.0.0.1:${child.info.port}`,
    stats,
    reset: async () => (await (await fetch(`${control}/reset`, { method: 'POST' })).json()) as SinkStats,
    times: async () => (await (await fetch(`${control}/times`)).json()) as number[],
    async waitFor(n, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const s = await stats();
        if (s.messages >= n) return s;
        if (Date.now() > end) throw new Error(`sink has ${s.messages} of ${n} messages after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    stop: async () => {
      await child.stop();
    },
  };
}
