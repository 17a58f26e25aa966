// The process of scripts/mutation-fast.mjs that runs test bundles in itself: it loads the packages once and
// loads a bundle (the test file with the instrumented sources) again for each mutant, so a mutant costs the
// test's own work, not a node start and the import of every package (about 1.4 s of CPU a test file here).
// `node mutation-fast-worker.mjs <plan.json>`; results are appended to the plan's `out` file, one JSON a line.
import { appendFileSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { mock } from 'node:test';
import { newSuite } from './mutation-node-test-shim.mjs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ns = (globalThis.__stryker__ ??= {});
let stray = [];
// an error thrown outside any awaited test code (a callback, a timer) fails the run, as it fails a node:test file
process.on('uncaughtException', (e) => stray.push(e));
process.on('unhandledRejection', (e) => stray.push(e));

// the mutant being judged, and the watching parent told of each of its file runs as it starts (see
// scripts/mutation-fast-jobs.mjs): written at once, as the run may block this process's event loop for good
let judged;
const announce = plan.watched ? (file) => writeSync(3, `${JSON.stringify({ id: judged, file })}\n`) : () => {};

const cpuMs = (c) => Math.round((c.user + c.system) / 1000);
const message = (e) => String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ');

async function call(fn, t) {
  if (fn.length >= 2) return new Promise((resolve, reject) => fn(t, (err) => (err ? reject(err) : resolve())));
  return fn(t);
}

function context(name) {
  const afters = [];
  const controller = new AbortController();
  return { t: { name, signal: controller.signal, mock, after: (fn) => afters.push(fn), diagnostic() {}, plan() {}, skip() {}, todo() {} }, afters, controller };
}

/** The tests of a subtree, skipped ones included: a test's number is its place in the file, counted so. */
const countTests = (suite) => suite.children.reduce((n, c) => n + (c.kind === 'suite' ? countTests(c) : 1), 0);
const hasSelected = (suite, first, only) => [...only].some((i) => i >= first && i < first + countTests(suite));

/**
 * A failure; the first one notes whether every test before it ran (`exact`): then the whole file, which stops at
 * its first failure too, would have run the same code up to the same failure.
 */
function fail(failures, run, text) {
  if (failures.length === 0) run.exact = !run.gap;
  failures.push(text);
}

async function runTest(test, beforeEach, afterEach, failures, run) {
  const index = run.next++;
  if (run.only && !run.only.has(index)) {
    run.gap ||= !test.skip;
    return;
  }
  // a mutant run stops at the first failure (one is the verdict); the after hooks still run to clean up
  if (test.skip || (plan.mode === 'mutants' && failures.length > 0)) return;
  // the dry run's coverage per test: what this test, its beforeEach/afterEach hooks and t.after reach
  if (plan.mode === 'dry') ns.currentTestId = `${run.file}#${index}`;
  const cpu0 = process.cpuUsage();
  const { t, afters, controller } = context(test.name);
  try {
    for (const h of beforeEach) await call(h, t);
    await call(test.fn, t);
  } catch (e) {
    fail(failures, run, `${test.name}: ${message(e)}`);
  }
  // node:test's order: the parents' afterEach hooks, then the test's own t.after callbacks
  for (const fn of [...afterEach, ...afters]) {
    try {
      await call(fn, t);
    } catch (e) {
      fail(failures, run, `${test.name} (after): ${message(e)}`);
    }
  }
  controller.abort();
  // module code, before/after hooks and what runs between tests count for the whole file
  if (plan.mode === 'dry') ns.currentTestId = run.file;
  run.testCpu[index] = cpuMs(process.cpuUsage(cpu0));
}

async function runSuite(suite, inherited, failures, run) {
  // with a selection of tests, a suite none of whose tests is selected runs nothing, not even its hooks
  if (suite.skip || (run.only && !hasSelected(suite, run.next, run.only))) {
    run.gap ||= !suite.skip;
    run.next += countTests(suite);
    return;
  }
  const beforeEach = [...inherited.beforeEach, ...suite.beforeEach];
  const afterEach = [...suite.afterEach, ...inherited.afterEach];
  const { t } = context(suite.name);
  let ready = true;
  try {
    for (const h of suite.before) await call(h, t);
  } catch (e) {
    fail(failures, run, `${suite.name} (before): ${message(e)}`);
    ready = false;
  }
  if (!ready) run.next += countTests(suite);
  for (const child of ready ? suite.children : []) {
    if (child.kind === 'suite') await runSuite(child, { beforeEach, afterEach }, failures, run);
    else await runTest(child, beforeEach, afterEach, failures, run);
  }
  for (const h of suite.after) {
    try {
      await call(h, t);
    } catch (e) {
      fail(failures, run, `${suite.name} (after): ${message(e)}`);
    }
  }
}

/**
 * Loads the file's bundle afresh (a new module instance: module-level code runs again) and runs its tests: all
 * of them, or only those numbered in `only` (a Set), with the hooks of the suites that hold them.
 */
async function runFile(file, key, budgetMs, only) {
  announce(file);
  const root = newSuite('<root>');
  const run = { file, next: 0, only, gap: false, exact: false, testCpu: {} };
  const cpu0 = process.cpuUsage();
  globalThis.__mutationCollector = { current: root };
  stray = [];
  const failures = [];
  const started = Date.now();
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), budgetMs);
  });
  const work = (async () => {
    await import(`${pathToFileURL(plan.bundles[file]).href}?run=${key}`);
    await runSuite(root, { beforeEach: [], afterEach: [] }, failures, run);
  })().catch((e) => failures.push(`load: ${message(e)}`));
  const outcome = await Promise.race([work.then(() => 'done'), timeout]);
  clearTimeout(timer);
  // errors thrown a little after the last test (a server closing) still belong to this run
  await new Promise((resolve) => setTimeout(resolve, 20));
  failures.push(...stray.map((e) => `uncaught: ${message(e)}`));
  const hitLimit = failures.some((f) => f.includes('Hit count limit reached'));
  return { ms: Date.now() - started, timedOut: outcome === 'timeout' || hitLimit, failures, exact: run.exact && stray.length === 0, tests: countTests(root), cpuMs: cpuMs(process.cpuUsage(cpu0)), testCpu: run.testCpu };
}

async function dryRun() {
  const files = {};
  for (const file of plan.files) {
    ns.currentTestId = file;
    const r = await runFile(file, 'dry', plan.dryBudgetMs);
    files[file] = { ms: r.ms, failures: r.failures, timedOut: r.timedOut, tests: r.tests, cpuMs: r.cpuMs, testCpu: r.testCpu };
  }
  ns.currentTestId = undefined;
  const cpu = process.cpuUsage();
  writeFileSync(plan.out, JSON.stringify({ files, coverage: ns.mutantCoverage ?? { static: {}, perTest: {} }, cpuMs: (cpu.user + cpu.system) / 1000 }));
}

// selection -> whether it passes without a mutant (tests picked out of a file may lean on the ones left out)
const cleanRuns = new Map();

/** Whether the selected tests of a file pass without any mutant: asked only when a mutant fails them. */
async function passesClean(file, only) {
  const key = `${file}#${[...only].join(',')}`;
  if (!cleanRuns.has(key)) {
    const active = ns.activeMutant;
    ns.activeMutant = undefined;
    const r = await runFile(file, `clean${cleanRuns.size}`, plan.budgetMs[file], only);
    ns.activeMutant = active;
    cleanRuns.set(key, !r.timedOut && r.failures.length === 0);
  }
  return cleanRuns.get(key);
}

/**
 * A mutant against one file: the tests that reached it in the dry run (job.only[file]) or, when module code or a
 * before/after hook reached it or those tests fail without it too, the whole file.
 */
async function mutantRun(job, file) {
  const only = job.only?.[file] ? new Set(job.only[file]) : undefined;
  const r = await runFile(file, `m${job.id}`, plan.budgetMs[file], only);
  if (!only || r.timedOut || r.failures.length === 0 || r.exact || (await passesClean(file, only))) return r;
  ns.hitCount = 0;
  job.wholeAgain = (job.wholeAgain ?? 0) + 1;
  return runFile(file, `m${job.id}all`, plan.budgetMs[file]);
}

async function mutantRuns() {
  let done = 0;
  for (const job of plan.jobs) {
    const cpu0 = process.cpuUsage();
    judged = job.id;
    ns.activeMutant = job.id;
    ns.hitCount = 0;
    ns.hitLimit = job.hitLimit;
    let verdict = { id: job.id, status: 'Survived', tests: job.files.length };
    for (const [i, file] of job.files.entries()) {
      const r = await mutantRun(job, file);
      if (r.timedOut || r.failures.length) {
        verdict = { id: job.id, status: r.timedOut ? 'Timeout' : 'Killed', killedBy: file, reason: r.failures[0] ?? 'timeout', tests: i + 1 };
        break;
      }
    }
    ns.activeMutant = undefined;
    ns.hitCount = undefined;
    const cpu = process.cpuUsage(cpu0);
    appendFileSync(plan.out, `${JSON.stringify({ ...verdict, wholeAgain: job.wholeAgain, cpuMs: cpuMs(cpu) })}\n`);
    // a timed-out run may still be going on: a fresh process for the next mutant; and a bounded heap
    if (verdict.status === 'Timeout' || ++done >= plan.perProcess) process.exit(0);
  }
  process.exit(0);
}

await (plan.mode === 'dry' ? dryRun() : mutantRuns());
