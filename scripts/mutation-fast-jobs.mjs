// scripts/mutation-fast.mjs, second half: runs the worker (scripts/mutation-fast-worker.mjs) until every job has a
// verdict. A worker ends after a timed-out mutant (its run may still be going on) and every `perProcess` mutants
// (a bounded heap). The worker's own timer cannot stop every endless mutant (an await loop that never yields to
// timers, a plain loop the hit counter does not see), so the parent watches each file run of a mutant as well:
// the worker says when one starts, and one not over by its file's budget (and a little grace, so that the worker's
// own timer normally has the first word) has its worker killed and counts as a timeout; a fresh worker goes on.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./mutation-fast-worker.mjs', import.meta.url));
// a worker's start, before its first file run: it loads only node's own modules and the test shim
const START_MS = 60_000;
/** How long past its budget a file run may go before the parent kills its worker. */
export const graceMs = (budgetMs) => 1_000 + Math.round(budgetMs / 10);

/** Runs one worker process on the plan (written to `<work>/plan.json`); the verdicts land in `plan.out`. */
export function worker(plan, work, env = process.env) {
  writeFileSync(`${work}/plan.json`, JSON.stringify(plan));
  return spawnSync(process.execPath, [WORKER, `${work}/plan.json`], { stdio: ['ignore', 'ignore', 'inherit'], env, timeout: plan.killAfterMs });
}

/**
 * A mutants worker whose file runs are watched: it writes `{ id, file }` to its fd 3 as each one starts (a
 * synchronous write, so the parent hears it even if the run then blocks the worker's event loop). Resolves when
 * the process has ended, with `overdue`: the run `{ id, file, ms }` it was killed for, if any.
 */
function watchedWorker(plan, work, env) {
  writeFileSync(`${work}/plan.json`, JSON.stringify({ ...plan, watched: true }));
  const child = spawn(process.execPath, [WORKER, `${work}/plan.json`], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'], env });
  let timer;
  let overdue;
  const killAfter = (ms, run) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      overdue = run && { ...run, ms };
      child.kill('SIGKILL');
    }, ms);
  };
  killAfter(START_MS);
  let pending = '';
  child.stdio[3].setEncoding('utf8');
  child.stdio[3].on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop();
    for (const line of lines) {
      const run = JSON.parse(line);
      killAfter(plan.budgetMs[run.file] + graceMs(plan.budgetMs[run.file]), run);
    }
  });
  // a runner that ends (an error, process.exit) does not leave a hung worker behind
  const stop = () => child.kill('SIGKILL');
  process.on('exit', stop);
  return new Promise((resolve) => {
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      process.off('exit', stop);
      resolve({ status, signal, overdue });
    });
  });
}

/** The verdicts so far; a line cut short (a process killed while writing it) is no verdict: that mutant runs again. */
export function readLines(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((l) => {
      try {
        return l ? [JSON.parse(l)] : [];
      } catch {
        return [];
      }
    });
}

/** Appends a verdict on a line of its own, even after a line the killed worker left unfinished. */
function appendVerdict(file, verdict) {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  appendFileSync(file, `${text && !text.endsWith('\n') ? '\n' : ''}${JSON.stringify(verdict)}\n`);
}

/**
 * Each job `{ id, files, hitLimit }` run against its files in order; `budgetMs` per test file. Resolves to the
 * verdicts by mutant id: `{ status: Killed | Timeout | Survived, killedBy?, reason?, cpuMs? }`.
 */
export async function runJobs({ jobs, bundles, budgetMs, perProcess = 40, work, env, progress = () => {} }) {
  const out = `${work}/results.jsonl`;
  for (;;) {
    const done = new Set(readLines(out).map((r) => r.id));
    const left = jobs.filter((j) => !done.has(j.id));
    progress(jobs.length - left.length, jobs.length);
    if (left.length === 0) break;
    const run = await watchedWorker({ mode: 'mutants', jobs: left, bundles, out, budgetMs, perProcess }, work, env);
    const now = new Set(readLines(out).map((r) => r.id));
    if (run.overdue) {
      // unless the worker wrote the verdict itself just before the kill
      const { id, file, ms } = run.overdue;
      if (!now.has(id)) appendVerdict(out, { id, status: 'Timeout', killedBy: file, reason: `worker killed: its run of ${file} not over in ${ms} ms (the file's budget and grace)` });
      continue;
    }
    // the first job without a verdict is the one the process was on when it ended (crashed, or killed before a run)
    const stuck = left.find((j) => !now.has(j.id));
    if (stuck && (run.status !== 0 || run.signal)) appendVerdict(out, { id: stuck.id, status: 'Timeout', reason: `worker ended (${run.signal ?? run.status})` });
  }
  return new Map(readLines(out).map((r) => [r.id, r]));
}

/**
 * The dry run's coverage (`<file>` for module code and before/after hooks, `<file>#<n>` for the file's n-th test
 * with its beforeEach/afterEach hooks) read per mutant: the files that reach it, in `files`' order; `only[file]`,
 * the numbers of the tests that reach it where no module code or hook of the file does; the hits over all.
 */
export function reachOf(perTest, files) {
  const tests = new Map(files.map((f) => [f, []]));
  for (const key of Object.keys(perTest)) {
    const at = key.lastIndexOf('#');
    if (at > 0 && tests.has(key.slice(0, at))) tests.get(key.slice(0, at)).push(Number(key.slice(at + 1)));
  }
  return (id) => {
    const only = {};
    let hits = 0;
    const covering = files.filter((f) => {
      const reached = tests.get(f).filter((n) => perTest[`${f}#${n}`][id]);
      for (const n of reached) hits += perTest[`${f}#${n}`][id];
      hits += perTest[f]?.[id] ?? 0;
      if (!perTest[f]?.[id] && reached.length) only[f] = reached.sort((a, b) => a - b);
      return perTest[f]?.[id] || reached.length;
    });
    return { files: covering, only, hits };
  };
}
