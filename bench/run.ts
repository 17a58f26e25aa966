import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiled, removeBuilds } from './lib/compiled.ts';
import { describePinning } from './lib/cores.ts';
import { LOAD_TOOL } from './lib/load.ts';
import { describeMachine, loadAverage } from './lib/machine.ts';
import { printProfiles } from './lib/profile.ts';
import { RESULT_LINE, SKIP_LINE } from './lib/report.ts';

/**
 * `npm run bench [-- <case>...] [--quick] [--cpu-prof]`: runs each case in its own process, one
 * after the other, and prints every line they print plus a summary. Each target gets one line:
 *   `name: value (baseline <name> X, ratio R, target T) PASS|FAIL|UNRELIABLE (machine busy)  [notes]`
 * --quick      one short round with small counts: checks that the bench runs, the figures mean little
 * --cpu-prof   the process under test runs with `node --cpu-prof`; its top 15 self-time frames are
 *              printed after the case (profiles kept under BENCH_CPU_PROF_DIR, default a temp folder)
 * `scale` (a 100,000-contact campaign, several minutes) runs only when named.
 */
const DEFAULT = ['pixel', 'dispatch', 'render', 'drips', 'campaign-stats'];
const CASES = [...DEFAULT, 'scale'];
/** cases whose subject runs in the bench file's own process: that process is the one profiled */
const IN_PROCESS = ['render', 'campaign-stats'];

const argv = process.argv.slice(2);
const flags = new Set(argv.filter((a) => a.startsWith('-')));
const wanted = argv.filter((a) => !a.startsWith('-'));
const unknown = [...wanted.filter((w) => !CASES.includes(w)), ...[...flags].filter((f) => !['--quick', '--cpu-prof'].includes(f))];
if (unknown.length) {
  console.error(`unknown ${unknown.join(', ')}; cases: ${CASES.join(', ')}; options: --quick, --cpu-prof`);
  process.exit(2);
}
const selected = wanted.length ? CASES.filter((b) => wanted.includes(b)) : DEFAULT;
const quick = flags.has('--quick');
const profileRoot = flags.has('--cpu-prof') ? (process.env.BENCH_CPU_PROF_DIR ?? mkdtempSync(join(tmpdir(), 'notify-cpu-prof-'))) : undefined;

async function runCase(name: string): Promise<{ lines: string[]; code: number | null }> {
  const source = new URL(`./${name}.ts`, import.meta.url);
  const profileDir = profileRoot && join(profileRoot, name);
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  // an in-process subject: this bench file is the process to profile, compiled (bench/lib/compiled.ts)
  const self = profileDir && IN_PROCESS.includes(name);
  const args = self ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, (await compiled(source)).file] : ['--import', 'tsx', fileURLToPath(source)];
  const env = { ...process.env, BENCH_QUICK: quick ? '1' : '', BENCH_CPU_PROF_DIR: profileDir && !self ? profileDir : '' };
  return new Promise((resolve) => {
    const lines: string[] = [];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      process.stdout.write(chunk);
      const parts = (buf + chunk).split('\n');
      buf = parts.pop() ?? '';
      lines.push(...parts);
    });
    child.on('exit', (code) => {
      if (profileDir) printProfiles(profileDir);
      resolve({ lines: buf ? [...lines, buf] : lines, code });
    });
  });
}

const started = Date.now();
console.log(`notify benchmarks, ${new Date().toISOString()}${quick ? ' (--quick: one short round, figures are not meaningful)' : ''}`);
console.log(`machine: ${describeMachine()}`);
console.log(`pinning: ${describePinning()}; HTTP load: ${LOAD_TOOL}; load average before: ${loadAverage().toFixed(2)}`);
const results: string[] = [];
const crashed: string[] = [];
for (const name of selected) {
  console.log(`\n## ${name}`);
  const t = Date.now();
  const { lines, code } = await runCase(name);
  console.log(`   (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  if (code !== 0) crashed.push(`${name} (exit ${code})`);
  results.push(...lines.filter((l) => RESULT_LINE.test(l) || SKIP_LINE.test(l)));
}

const count = (v: string) => results.filter((l) => (l.match(RESULT_LINE)?.[9] ?? (SKIP_LINE.test(l) ? 'SKIP' : '')).startsWith(v)).length;
console.log(`\n## summary (${((Date.now() - started) / 1000).toFixed(0)} s, load average after: ${loadAverage().toFixed(2)})`);
for (const l of results) console.log(l);
console.log(`\n${count('PASS')} pass, ${count('FAIL')} fail, ${count('UNRELIABLE')} unreliable, ${count('SKIP')} skipped${crashed.length ? `; crashed: ${crashed.join(', ')}` : ''}`);
if (profileRoot) {
  removeBuilds();
  console.log(`profiles: ${profileRoot}`);
}
process.exitCode = crashed.length ? 1 : 0;
