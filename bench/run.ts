import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench`: runs each hot path's benchmark in its own process, one after the other (the
 * machine has few cores: nothing else of ours runs meanwhile), and prints every line they print
 * plus a summary. Usage: `npm run bench [-- <name>...]`, e.g. `npm run bench -- pixel render`.
 * Each line reads `name: figure (baseline figure) ratio X.XX, goal >= Y: PASS|FAIL`; the ratio is
 * always "higher is better" and the baseline is measured in the same run on this machine.
 */
const BENCHES = ['pixel', 'dispatch', 'render', 'drips', 'campaign-stats'];

/** a measurement line (see bench/lib/report.ts); group 1 is the verdict */
const RESULT = /(?:goal [^:]*: (PASS|FAIL)\b|: (SKIP) \()/;

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => !BENCHES.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${BENCHES.join(', ')}`);
  process.exit(2);
}
const selected = wanted.length ? BENCHES.filter((b) => wanted.includes(b)) : BENCHES;

function runOne(name: string): Promise<{ lines: string[]; code: number | null; seconds: number }> {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const started = Date.now();
  if (!existsSync(file)) return Promise.resolve({ lines: [`${name}: SKIP (bench/${name}.ts is not in this checkout)`], code: 0, seconds: 0 });
  return new Promise((resolve) => {
    const lines: string[] = [];
    const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      process.stdout.write(chunk);
      buf += chunk;
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      lines.push(...parts);
    });
    child.on('exit', (code) => resolve({ lines: buf ? [...lines, buf] : lines, code, seconds: (Date.now() - started) / 1000 }));
  });
}

const started = Date.now();
console.log(`notify benchmarks: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${new Date().toISOString()}`);
const results: string[] = [];
const crashed: string[] = [];
for (const name of selected) {
  console.log(`\n## ${name}`);
  const { lines, code, seconds } = await runOne(name);
  console.log(`   (${seconds.toFixed(1)} s)`);
  if (code !== 0) crashed.push(`${name} (exit ${code})`);
  results.push(...lines.filter((l) => RESULT.test(l)));
}

const count = (v: string) => results.filter((l) => (l.match(RESULT)?.[1] ?? l.match(RESULT)?.[2]) === v).length;
console.log(`\n## summary (${((Date.now() - started) / 1000).toFixed(0)} s)`);
for (const l of results) console.log(l);
console.log(`\n${count('PASS')} pass, ${count('FAIL')} fail, ${count('SKIP')} skipped${crashed.length ? `; crashed: ${crashed.join(', ')}` : ''}`);
process.exitCode = crashed.length ? 1 : 0;
