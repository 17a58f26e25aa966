// scripts/mutation-fast.mjs, second half: runs the worker (scripts/mutation-fast-worker.mjs) until every job has a
// verdict. A worker ends after a timed-out mutant (its run may still be going on) and every `perProcess` mutants
// (a bounded heap); one that ends or is killed without the verdict of the mutant it was on makes that a timeout.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./mutation-fast-worker.mjs', import.meta.url));

/** Runs one worker process on the plan (written to `<work>/plan.json`); the verdicts land in `plan.out`. */
export function worker(plan, work, env = process.env) {
  writeFileSync(`${work}/plan.json`, JSON.stringify(plan));
  return spawnSync(process.execPath, [WORKER, `${work}/plan.json`], { stdio: ['ignore', 'ignore', 'inherit'], env, timeout: plan.killAfterMs });
}

export function readLines(file) {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

/**
 * Each job `{ id, files, hitLimit }` run against its files in order; `budgetMs` per test file. Returns the
 * verdicts by mutant id: `{ status: Killed | Timeout | Survived, killedBy?, reason?, cpuMs? }`.
 */
export function runJobs({ jobs, bundles, budgetMs, perProcess = 40, work, env, progress = () => {} }) {
  const out = `${work}/results.jsonl`;
  for (;;) {
    const done = new Set(readLines(out).map((r) => r.id));
    const left = jobs.filter((j) => !done.has(j.id));
    progress(jobs.length - left.length, jobs.length);
    if (left.length === 0) break;
    const batch = left.slice(0, perProcess);
    const killAfterMs = batch.reduce((n, j) => n + j.files.reduce((m, f) => m + budgetMs[f], 0), 0) + 60_000;
    const run = worker({ mode: 'mutants', jobs: left, bundles, out, budgetMs, perProcess, killAfterMs }, work, env);
    const now = new Set(readLines(out).map((r) => r.id));
    const stuck = left.find((j) => !now.has(j.id));
    // the first job without a verdict is the one the process was on when it ended (hung, or crashed the process)
    if (stuck && (run.status !== 0 || run.signal)) writeFileSync(out, `${JSON.stringify({ id: stuck.id, status: 'Timeout', reason: `worker ended (${run.signal ?? run.status})` })}\n`, { flag: 'a' });
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
