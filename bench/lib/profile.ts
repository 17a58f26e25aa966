import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** zero-based line and column of the function's start */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** The parts of a V8 .cpuprofile (what `node --cpu-prof` writes) that the summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; hitCount?: number }[];
  /** microseconds */
  startTime: number;
  endTime: number;
  samples?: number[];
}

export interface Frame {
  /** "functionName file:line" */
  frame: string;
  ms: number;
  /** share of the busy samples (all but "(idle)") */
  share: number;
}

export interface ProfileSummary {
  seconds: number;
  idleMs: number;
  busyMs: number;
  top: Frame[];
}

/**
 * Self time per function: each node's hitCount times the sampling interval (the profile's
 * duration over its sample count), summed over every node with the same function, file and line
 * (one function appears once per distinct caller path), largest first. Idle time is counted
 * apart: a server between two rounds of load is idle, and that says nothing about its code.
 */
export function summarise(profile: CpuProfile, count = 15): ProfileSummary {
  const hits = profile.nodes.reduce((n, node) => n + (node.hitCount ?? 0), 0);
  const intervalMs = (profile.endTime - profile.startTime) / (profile.samples?.length || hits || 1) / 1000;
  const byFrame = new Map<string, number>();
  let idle = 0;
  for (const { callFrame: f, hitCount = 0 } of profile.nodes) {
    if (hitCount === 0) continue;
    if (f.functionName === '(idle)') {
      idle += hitCount;
      continue;
    }
    const key = `${f.functionName || '(anonymous)'}${f.url ? ` ${where(f)}` : ''}`;
    byFrame.set(key, (byFrame.get(key) ?? 0) + hitCount);
  }
  const busy = hits - idle;
  const top = [...byFrame]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, n]) => ({ frame, ms: n * intervalMs, share: n / busy }));
  return { seconds: (profile.endTime - profile.startTime) / 1e6, idleMs: idle * intervalMs, busyMs: busy * intervalMs, top };
}

const maps = new Map<string, SourceMap | undefined>();

/** file:line of the frame, in the source when the script has a source map beside it (bench/lib/compiled.ts). */
function where(f: CallFrame): string {
  if (!f.url.startsWith('file:')) return `${f.url}:${f.lineNumber + 1}`;
  const script = fileURLToPath(f.url);
  if (!maps.has(script)) maps.set(script, existsSync(`${script}.map`) ? new SourceMap(JSON.parse(readFileSync(`${script}.map`, 'utf8'))) : undefined);
  const entry = maps.get(script)?.findEntry(f.lineNumber, f.columnNumber) as { originalSource?: string; originalLine?: number } | undefined;
  if (entry?.originalSource) return `${shortPath(resolve(dirname(script), entry.originalSource))}:${entry.originalLine! + 1}`;
  return `${shortPath(script)}:${f.lineNumber + 1}`;
}

function shortPath(path: string): string {
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) return path.slice(inModules + '/node_modules/'.length);
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
}

/**
 * Prints the top self-time frames of every main-thread profile in `dir` (node names them
 * CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main one, the others are
 * worker threads such as tsx's module loader).
 */
export function printProfiles(dir: string, count = 15): void {
  for (const file of readdirSync(dir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))) {
    const path = join(dir, file);
    const s = summarise(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile, count);
    console.log(`\n  top ${count} self-time frames of ${path} (${s.seconds.toFixed(1)} s profiled: ${(s.busyMs / 1000).toFixed(1)} s busy, ${(s.idleMs / 1000).toFixed(1)} s idle):`);
    for (const f of s.top) console.log(`  ${f.ms.toFixed(0).padStart(8)} ms ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.frame}`);
  }
}
