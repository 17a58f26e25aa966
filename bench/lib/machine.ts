import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';

/** What the figures were measured on: printed at the top of every run. */
export function describeMachine(): string {
  return `${cpuModel()}, ${availableParallelism()} cores, node ${process.version}, ${process.platform}`;
}

function cpuModel(): string {
  const info = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  return /^model name\s*:\s*(.+)$/m.exec(info)?.[1].trim() ?? cpus()[0]?.model ?? 'unknown CPU';
}

/** The 1-minute load average. */
export function loadAverage(): number {
  return existsSync('/proc/loadavg') ? Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) : loadavg()[0];
}

export const HAS_PROCFS = existsSync('/proc/stat');
/** clock ticks per second, the unit of /proc/stat and /proc/<pid>/stat */
export const HZ = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** CPU ticks spent by the whole machine (every core, steal included: another VM's work is not idle for us). */
export function machineBusyTicks(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return user + nice + system + irq + softirq + (steal || 0);
}

export interface ProcessTicks {
  ppid: number;
  comm: string;
  /** own CPU ticks plus those of its children it has reaped */
  ticks: number;
}

/** Every process we can see, by pid. A process that exits while we read is left out. */
export function processTicks(): Map<number, ProcessTicks> {
  const all = new Map<number, ProcessTicks>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) state ppid ... utime stime cutime cstime ...": comm may hold spaces and parentheses
    const close = stat.lastIndexOf(')');
    const f = stat.slice(close + 2).split(' ');
    all.set(Number(name), { ppid: Number(f[1]), comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
  }
  return all;
}
