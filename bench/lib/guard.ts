import { QUICK } from './options.ts';
import { HAS_PROCFS, HZ, loadAverage, machineBusyTicks, processTicks } from './machine.ts';
import { sleep } from './timing.ts';

/**
 * The load guard: a figure taken while other work shares the machine is not reported as PASS or
 * FAIL (a loaded machine slows baseline and subject alike and pulls every ratio toward 1).
 * A case is UNRELIABLE (machine busy) when
 *   - the 1-minute load average is above BENCH_MAX_LOAD (0.7) when it starts: a quiet machine sits
 *     well under 1. Our own previous case leaves load behind, so the guard first waits up to
 *     BENCH_SETTLE_SECONDS (90; 0 in quick mode) for it to fall under the threshold; or
 *   - during the case, processes that are not ours used more than BENCH_MAX_FOREIGN_CORES (0.15)
 *     cores on average. The load average cannot tell this: after a case it mostly shows the
 *     case's own work. Instead: the machine's busy CPU time (/proc/stat, steal included) minus
 *     the CPU time of this process and its descendants (reaped ones included) minus PostgreSQL's
 *     (the bench's database work runs there).
 */
const MAX_LOAD = Number(process.env.BENCH_MAX_LOAD ?? 0.7);
const MAX_FOREIGN_CORES = Number(process.env.BENCH_MAX_FOREIGN_CORES ?? 0.15);
const SETTLE_SECONDS = QUICK ? 0 : Number(process.env.BENCH_SETTLE_SECONDS ?? 90);

export interface GuardResult {
  busy: boolean;
  /** e.g. "load 0.12 -> 0.95, other processes 0.02 cores" */
  text: string;
  foreignCores: number;
}

interface CpuSample {
  at: number;
  busy: number;
  own: number;
  db: number;
}

const DATABASE_PROCESSES = new Set(['postgres', 'postmaster']);

/** CPU ticks of the machine, of `root` with its descendants, and of the database server, read together. */
export function cpuSample(root = process.pid): CpuSample {
  const at = performance.now();
  if (!HAS_PROCFS) return { at, busy: Number.NaN, own: 0, db: 0 };
  const busy = machineBusyTicks();
  const procs = processTicks();
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const ours = new Set<number>();
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    ours.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  let own = 0;
  let db = 0;
  for (const [pid, p] of procs) {
    if (ours.has(pid)) own += p.ticks;
    else if (DATABASE_PROCESSES.has(p.comm)) db += p.ticks;
  }
  return { at, busy, own, db };
}

/** Cores used on average between two samples by processes that are neither ours nor the database. */
export function foreignCores(a: CpuSample, b: CpuSample): number {
  const ticks = b.busy - a.busy - (b.own - a.own) - (b.db - a.db);
  return Math.max(0, ticks / HZ / ((b.at - a.at) / 1000));
}

/** Call before a case (waits for the load to settle), then `finish()` after it. */
export async function startGuard(): Promise<{ finish(): GuardResult }> {
  const deadline = Date.now() + SETTLE_SECONDS * 1000;
  if (loadAverage() > MAX_LOAD && SETTLE_SECONDS > 0) console.error(`  (waiting up to ${SETTLE_SECONDS} s for the load average to fall under ${MAX_LOAD})`);
  while (loadAverage() > MAX_LOAD && Date.now() < deadline) await sleep(2000);
  const loadBefore = loadAverage();
  const start = cpuSample();
  return {
    finish() {
      const foreign = foreignCores(start, cpuSample());
      const loadAfter = loadAverage();
      const busy = loadBefore > MAX_LOAD || foreign > MAX_FOREIGN_CORES;
      const other = Number.isNaN(foreign) ? 'other processes unknown (no /proc)' : `other processes ${foreign.toFixed(2)} cores`;
      return { busy, foreignCores: foreign, text: `load ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}, ${other}` };
    },
  };
}
