import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Where processes run. With taskset (util-linux) and at least two cores, the process under test
 * gets core 0 and the load generator (HTTP load, SMTP sink, the bench process itself) core 1, so
 * the two never take turns on one core and the figure is the subject's, not the scheduler's.
 */
export const SUBJECT_CORE = 0;
export const LOAD_CORE = 1;

const hasTaskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
export const PINNING = hasTaskset && availableParallelism() >= 2;

/** The command line that runs `command` on `core` (unchanged without pinning). */
export function onCore(core: number | undefined, command: string, args: string[]): [string, string[]] {
  return PINNING && core !== undefined ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];
}

/** Moves this process (all its threads) to `core`. */
export function pinSelf(core: number): void {
  if (PINNING) spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
}

export function describePinning(): string {
  if (PINNING) return `taskset: process under test on core ${SUBJECT_CORE}, load generator and sink on core ${LOAD_CORE}`;
  return hasTaskset ? 'not pinned (fewer than 2 cores)' : 'not pinned (no taskset: install util-linux)';
}
