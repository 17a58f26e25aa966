import cluster, { type Worker } from 'node:cluster';
import { NotifyError } from '../../errors.ts';

/** The most worker processes `notify serve --workers` starts: far more than cores only adds contention. */
export const MAX_WORKERS = 64;

/** `--workers <n>`: a whole number from 1 to MAX_WORKERS, else INVALID_INPUT naming what was given. */
export function parseWorkers(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > MAX_WORKERS) {
    throw new NotifyError('INVALID_INPUT', `--workers must be a whole number from 1 to ${MAX_WORKERS} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** What a worker tells the primary once its server listens. */
interface ListeningMessage {
  notify: 'listening';
  url: string;
}

const isListening = (m: unknown): m is ListeningMessage => typeof m === 'object' && m !== null && (m as ListeningMessage).notify === 'listening';

/** In a worker process: tells the primary that this worker serves at `url`. */
export function announceListening(url: string): void {
  process.send?.({ notify: 'listening', url } satisfies ListeningMessage);
}

export interface PrimaryOptions {
  workers: number;
  log?: (line: string) => void;
  /** called once every worker listens, with their common URL */
  onListening?: (url: string) => void;
}

/**
 * The primary of `notify serve --workers <n>` (node:cluster): it serves nothing itself. It forks n
 * copies of this same command line; each worker builds its own instance and listens on the same
 * port (the primary hands connections to them in turn). Tracking events stay correct across
 * workers because each flush locks the sends it updates (BEGIN IMMEDIATE on SQLite, row locks on
 * PostgreSQL): a first open reaching two workers is counted once.
 *
 * SIGTERM or SIGINT is passed to every worker, which stops as a single `notify serve` does
 * (finishes requests, writes its buffered events); the primary exits once all have, 0 when every
 * worker did. A worker that dies while serving is replaced; one that dies before it listens
 * (a busy port, a bad configuration) stops them all and the primary exits 1.
 */
export function runPrimary(opts: PrimaryOptions): Promise<number> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const listening = new Map<Worker, string>();
  // our own count: cluster.workers drops a worker only after both its exit and its disconnect
  const alive = new Set<Worker>();
  let stopping = false;
  let ready = false;
  let failed = false;

  return new Promise((resolve) => {
    const finishIfDone = () => {
      if (alive.size === 0) resolve(failed ? 1 : 0);
    };
    const stopAll = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      for (const w of alive) w.process.kill(signal);
      finishIfDone();
    };
    const fork = () => {
      const worker = cluster.fork();
      alive.add(worker);
      worker.on('message', (m: unknown) => {
        if (!isListening(m)) return;
        listening.set(worker, m.url);
        if (!ready && listening.size === opts.workers) {
          ready = true;
          opts.onListening?.(m.url);
        }
      });
      worker.on('exit', (code, signal) => {
        alive.delete(worker);
        const served = listening.delete(worker);
        const how = signal ?? `code ${code}`;
        if (stopping) {
          if (code !== 0) failed = true;
          return finishIfDone();
        }
        if (served && ready) {
          // A crash while serving: the others go on, a new worker takes its place.
          log(`notify: worker ${worker.process.pid} exited (${how}); starting another`);
          fork();
          return;
        }
        log(`notify: worker ${worker.process.pid} exited (${how}) before it listened; stopping`);
        failed = true;
        stopAll('SIGTERM');
      });
    };

    const onSignal = (signal: NodeJS.Signals) => {
      log(`notify: ${signal} received, stopping ${alive.size} workers (each finishes its requests and writes its buffered events)`);
      stopAll('SIGTERM');
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    for (let i = 0; i < opts.workers; i++) fork();
  });
}
