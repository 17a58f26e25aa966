/**
 * One line per measurement, the same shape for every hot path:
 *   `name: figure (baseline figure) ratio X.XX, goal >= Y: PASS|FAIL`
 * The ratio is always "higher is better": figure / baseline for a rate, baseline / figure for a
 * time. A goal is either on that ratio or, for a time, on the figure itself (`goal <= 15 µs`).
 */
export interface Measurement {
  name: string;
  figure: number;
  unit: string;
  baselineName: string;
  baseline: number;
  /** 'rate': more is better (req/s, msg/s); 'time': less is better (µs, ms) */
  kind: 'rate' | 'time';
  goal: { on: 'ratio'; min: number } | { on: 'figure'; max: number };
  /** extra facts printed after the verdict, e.g. "recorded 52,011 of 52,011" */
  note?: string;
}

export type Verdict = 'PASS' | 'FAIL' | 'SKIP';

export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ratioOf(m: Pick<Measurement, 'figure' | 'baseline' | 'kind'>): number {
  return m.kind === 'rate' ? m.figure / m.baseline : m.baseline / m.figure;
}

export function verdict(m: Measurement): Verdict {
  if (m.goal.on === 'ratio') return ratioOf(m) >= m.goal.min ? 'PASS' : 'FAIL';
  return m.figure <= m.goal.max ? 'PASS' : 'FAIL';
}

export function formatLine(m: Measurement): string {
  const goal = m.goal.on === 'ratio' ? `goal >= ${m.goal.min}` : `goal <= ${m.goal.max} ${m.unit}`;
  const head = `${m.name}: ${fmt(m.figure)} ${m.unit} (${m.baselineName} ${fmt(m.baseline)} ${m.unit}) ratio ${ratioOf(m) >= 100 ? ratioOf(m).toFixed(0) : ratioOf(m).toFixed(2)}, ${goal}: ${verdict(m)}`;
  return m.note ? `${head}  [${m.note}]` : head;
}

/** Prints the measurement line; bench/run.ts collects these lines from every bench file. */
export function report(m: Measurement): Verdict {
  console.log(formatLine(m));
  return verdict(m);
}

/** A hot path that cannot be measured in this checkout (not built yet, or its database is missing). */
export function skip(name: string, reason: string): void {
  console.log(`${name}: SKIP (${reason})`);
}

/** A figure printed for information, with no goal (a baseline, a secondary fact). */
export function info(name: string, text: string): void {
  console.log(`  ${name}: ${text}`);
}
