import type { GuardResult } from './guard.ts';

/**
 * One line per target, the same shape for every hot path:
 *   `name: value unit (baseline <name> X unit, ratio R, target T) PASS|FAIL|UNRELIABLE (machine busy)  [notes]`
 * The ratio is always value / baseline, both from the same run. A target is on that ratio
 * (`target >= 0.6`) or on the value itself (`target <= 10 µs`).
 */
export interface Measurement {
  name: string;
  value: number;
  unit: string;
  baselineName: string;
  baseline: number;
  target: { on: 'ratio' | 'value'; op: '>=' | '<=' | '<'; limit: number };
  /** the ratio when it is not simply value / baseline (e.g. the median of per-round ratios) */
  ratio?: number;
  /** extra facts printed after the verdict, e.g. "recorded 52,011 of 52,011" */
  note?: string;
}

export type Verdict = 'PASS' | 'FAIL' | 'UNRELIABLE (machine busy)';

/** The shape of a result line (bench/run.ts collects these; test/bench checks them). */
export const RESULT_LINE = /^(.+): (\S+) (\S+) \(baseline (.+) (\S+) \S+, ratio (\S+), target (>=|<=|<) (\S+)(?: \S+)?\) (PASS|FAIL|UNRELIABLE \(machine busy\))(?: {2}\[(.*)\])?$/;
export const SKIP_LINE = /^(.+): SKIP \((.+)\)$/;

/** Three significant digits (whole numbers from 100 up), thousands separated. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs < 1) return n.toPrecision(3);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A whole number with thousands separators. */
export const count = (n: number): string => Math.round(n).toLocaleString('en-US');

export function verdict(m: Measurement, guard: GuardResult): Verdict {
  if (guard.busy) return 'UNRELIABLE (machine busy)';
  const x = m.target.on === 'ratio' ? (m.ratio ?? m.value / m.baseline) : m.value;
  const { op, limit } = m.target;
  return (op === '>=' ? x >= limit : op === '<=' ? x <= limit : x < limit) ? 'PASS' : 'FAIL';
}

export function formatLine(m: Measurement, guard: GuardResult): string {
  const ratio = m.ratio ?? m.value / m.baseline;
  const target = `${m.target.op} ${m.target.limit}${m.target.on === 'value' ? ` ${m.unit}` : ''}`;
  const notes = [m.note, guard.text].filter(Boolean).join('; ');
  return `${m.name}: ${fmt(m.value)} ${m.unit} (baseline ${m.baselineName} ${fmt(m.baseline)} ${m.unit}, ratio ${fmt(ratio)}, target ${target}) ${verdict(m, guard)}  [${notes}]`;
}

/** Prints the result line. */
export function report(m: Measurement, guard: GuardResult): Verdict {
  console.log(formatLine(m, guard));
  return verdict(m, guard);
}

/** A target that cannot be measured here (its database is missing, or the feature is not built). */
export function skip(name: string, reason: string): void {
  console.log(`${name}: SKIP (${reason})`);
}

/** A figure printed for information, with no target (a baseline, a secondary fact). */
export function info(name: string, text: string): void {
  console.log(`  ${name}: ${text}`);
}
