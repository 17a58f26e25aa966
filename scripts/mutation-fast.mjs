// npm run test:mutation -- <target or group...> --fast [--force] [--resume] [--per-process=N]: the targets of
// scripts/mutation-targets.mjs judged by an in-process runner instead of Stryker's one node process per test
// file per mutant. Stryker's instrumenter places every mutant; scripts/mutation-fast-worker.mjs loads the
// packages once and loads each test bundle again per mutant. Coverage per test file, fastest file first,
// first failure kills, as the Stryker setup (stryker.config.mjs). The verdicts go to
// reports/mutation/<target>.fast.json (committed), which `--scores` reads beside Stryker's reports; a rerun
// keeps the detected verdicts of files whose source did not change (`--force` retests all).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { bundle, instrument, mutatedFiles } from './mutation-fast-build.mjs';
import { reachOf, runJobs, worker } from './mutation-fast-jobs.mjs';
import { keptVerdictOf, keptVerdicts, reportLocation } from './mutation-fast-kept.mjs';
import { printScores } from './mutation-scores.mjs';
import { GROUPS, TARGETS, targetTests } from './mutation-targets.mjs';

const args = process.argv.slice(2);
const force = args.includes('--force');
// --resume: an interrupted target goes on from the verdicts its work folder holds, if its sources are unchanged
const resume = args.includes('--resume');
const perProcess = Number(args.find((a) => a.startsWith('--per-process='))?.split('=')[1] ?? 40);
const named = args.filter((a) => !a.startsWith('-'));
const targets = [...new Set(named.flatMap((n) => GROUPS[n] ?? [n]))];
const unknown = targets.filter((t) => !TARGETS[t]);
if (targets.length === 0 || unknown.length) {
  console.error(`usage: npm run test:mutation -- <target...> --fast [--force] [--resume] [--per-process=N]${unknown.length ? `\nunknown: ${unknown.join(', ')}` : ''}`);
  process.exit(2);
}
// SQLite only, as scripts/mutation.mjs
const env = { ...process.env };
for (const name of ['NOTIFY_TEST_PG_URL', 'NOTIFY_TEST_REDIS_URL', 'NOTIFY_TEST_CHROMIUM', 'CI', '__STRYKER_ACTIVE_MUTANT__']) delete env[name];

/** The previous report's detected verdicts that still hold: same file source, same mutant. */
function kept(name, sources) {
  const file = `reports/mutation/${name}.fast.json`;
  if (force || !existsSync(file)) return new Map();
  return keptVerdicts(JSON.parse(readFileSync(file, 'utf8')), sources);
}

/** A file's CPU in the dry run, less that of its tests not in `only` (all of them run when none is given). */
function selectionCost(file, only) {
  if (!only) return file.cpuMs;
  const left = Object.entries(file.testCpu).filter(([n]) => !only.includes(Number(n)));
  return left.reduce((ms, [, t]) => ms - t, file.cpuMs);
}

async function runTarget(name, work) {
  const started = Date.now();
  const load = [loadavg()[0]];
  const files = mutatedFiles(TARGETS[name].mutate);
  const { sources, instrumented, mutants } = await instrument(files);
  const print = keepOnlyIfSame(name, work, sources);
  const tests = targetTests(name);
  const bundles = await bundle(tests, instrumented, `${work}/bundles`);
  const dryOut = `${work}/dry.json`;
  worker({ mode: 'dry', files: tests, bundles, out: dryOut, dryBudgetMs: 600_000, killAfterMs: 1_800_000 }, work, env);
  const dry = JSON.parse(readFileSync(dryOut, 'utf8'));
  const broken = tests.filter((f) => dry.files[f].failures.length || dry.files[f].timedOut);
  for (const f of broken) console.log(`  left out, fails without a mutant: ${f}: ${dry.files[f].failures[0] ?? 'timeout'}`);
  const usable = tests.filter((f) => !broken.includes(f)).sort((a, b) => dry.files[a].ms - dry.files[b].ms);
  // a file's budget per mutant: its clean time x3 + 10 s, x the load per core (the wall clock is shared)
  const slow = Math.max(1, loadavg()[0] / cpus().length);
  const budgetMs = Object.fromEntries(usable.map((f) => [f, Math.round((dry.files[f].ms * 3 + 10_000) * Math.min(slow, 6))]));
  const reach = reachOf(dry.coverage.perTest, usable);
  const old = kept(name, sources);
  const verdicts = new Map();
  const jobs = [];
  for (const m of mutants) {
    const prev = keptVerdictOf(old, m);
    const { files: reached, only, hits } = reach(m.id);
    // the cheapest run first: a file's tests that reached the mutant, by their CPU in the dry run
    const covering = reached.map((f) => [f, selectionCost(dry.files[f], only[f])]).sort((a, b) => a[1] - b[1]).map(([f]) => f);
    if (prev) verdicts.set(m.id, { status: prev.status, killedBy: prev.killedBy, reason: prev.statusReason, kept: true });
    else if (covering.length === 0) verdicts.set(m.id, { status: 'NoCoverage' });
    else jobs.push({ id: m.id, files: covering, only, hitLimit: (hits + 1000) * 50 });
  }
  console.log(`${name}: ${mutants.length} mutants in ${files.length} files, ${usable.length} test files (dry run ${(dry.cpuMs / 1000).toFixed(1)} s CPU); ${old.size ? `${verdicts.size} verdicts kept or uncovered, ` : ''}${jobs.length} to run`);
  const progress = (n, all) => {
    process.stdout.write(`\r  ${n}/${all} mutants run, ${Math.round((Date.now() - started) / 60000)} min`);
    savePartial(name, work, print, false);
  };
  let cpuMs = 0;
  for (const [id, r] of await runJobs({ jobs, bundles, budgetMs, perProcess, work, env, progress })) {
    verdicts.set(id, r);
    cpuMs += r.cpuMs ?? 0;
  }
  load.push(loadavg()[0]);
  writeReport(name, { sources, mutants, verdicts, tests: usable, started, load, cpuMs: cpuMs + dry.cpuMs });
  savePartial(name, work, print, true);
}

// the instrumenter counts lines and columns from 0, the report schema (and Stryker's reports) from 1
function writeReport(name, { sources, mutants, verdicts, tests, started, load, cpuMs }) {
  const files = Object.fromEntries(Object.entries(sources).map(([path, source]) => [path, { language: 'typescript', source, mutants: [] }]));
  const count = {};
  for (const m of mutants) {
    const v = verdicts.get(m.id);
    count[v.status] = (count[v.status] ?? 0) + 1;
    files[m.fileName].mutants.push({ id: m.id, mutatorName: m.mutatorName, replacement: m.replacement, location: reportLocation(m.location), status: v.status, killedBy: v.killedBy ? [v.killedBy] : undefined, statusReason: v.reason });
  }
  const minutes = (Date.now() - started) / 60000;
  const run = { date: new Date().toISOString(), runner: 'scripts/mutation-fast.mjs', minutes: Number(minutes.toFixed(1)), cpuSeconds: Math.round(cpuMs / 1000), loadAverage: load.map((l) => Number(l.toFixed(1))), counts: count, tests };
  writeFileSync(`reports/mutation/${name}.fast.json`, `${JSON.stringify({ schemaVersion: 'notify-fast-1', run, files })}\n`);
  console.log(`\n${name}: ${JSON.stringify(count)}; ${run.minutes} min, ${run.cpuSeconds} s CPU, load average ${run.loadAverage.join(' -> ')} on ${cpus().length} cores`);
  for (const [path, f] of Object.entries(files)) {
    for (const m of f.mutants.filter((x) => x.status === 'Survived' || x.status === 'NoCoverage')) {
      console.log(`  ${m.status.padEnd(10)} ${path}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} -> ${JSON.stringify(m.replacement ?? '').slice(0, 100)}`);
    }
  }
}

/**
 * The verdicts an unfinished target has so far, kept beside the reports (committed) so that a run on
 * another machine can go on with --resume: first line the sources' fingerprint, then one verdict per line.
 */
const partialFile = (name) => `reports/mutation/${name}.partial.jsonl`;

/** The work folder's verdicts (or, on --resume, the committed partial ones) stand only for the same sources: mutant ids are counted over them. */
function keepOnlyIfSame(name, work, sources) {
  const print = createHash('sha256').update(JSON.stringify(sources)).digest('hex');
  const results = `${work}/results.jsonl`;
  if (resume && !existsSync(results) && existsSync(partialFile(name))) {
    const [head, ...lines] = readFileSync(partialFile(name), 'utf8').split('\n').filter(Boolean);
    if (JSON.parse(head).sources === print) writeFileSync(results, lines.map((l) => `${l}\n`).join(''));
  }
  const file = `${work}/sources.sha256`;
  if (existsSync(file) && readFileSync(file, 'utf8') !== print) rmSync(results, { force: true });
  writeFileSync(file, print);
  return print;
}

/** Copies the verdicts so far to the partial file (after each worker process), or removes it when the target is done. */
function savePartial(name, work, print, done) {
  if (done) return rmSync(partialFile(name), { force: true });
  const results = `${work}/results.jsonl`;
  if (existsSync(results)) writeFileSync(partialFile(name), `${JSON.stringify({ sources: print })}\n${readFileSync(results, 'utf8')}`);
}

for (const name of targets) {
  const work = `.mutation-fast/${name}`;
  if (!resume) rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  console.log(`\n== in-process mutation testing: ${name} (${TARGETS[name].mutate.join(', ')})`);
  await runTarget(name, work);
}
await printScores(targets);
