// The scores `npm run test:mutation` prints, read from the reports kept in reports/mutation/: per file, then per
// folder with what the folder's figure leaves out (files never scored, files changed since their run), so that a
// folder's score over a few files is not read as the whole folder's.
import { existsSync, readFileSync } from 'node:fs';
import { matchesGlob } from 'node:path';
// Stryker's own instrumenter (installed with @stryker-mutator/core) counts the mutants of a file without running anything.
import { Instrumenter } from '@stryker-mutator/instrumenter';
import { TARGETS } from './mutation-targets.mjs';
import { testFiles } from './test-files.mjs';

/** Stryker's score: detected (killed or timed out) over detected + undetected (survived or not covered). */
export const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
/** The folders whose scores the issue asks for; each file of them belongs to one target. */
const FOLDERS = ['src/core', 'src/webhooks'];

/**
 * The target's last report, by file: the in-process runner's (scripts/mutation-fast.mjs; a Stryker run of the
 * target deletes it, so it is there only when it is the newer), else the full report of a local Stryker run,
 * else the committed incremental file.
 */
function lastReport(name) {
  // the last two hold the same verdicts; a fresh checkout has only the incremental file
  const path = [`reports/mutation/${name}.fast.json`, `reports/mutation/${name}.json`, `reports/mutation/${name}.incremental.json`].find((f) => existsSync(f));
  return path ? JSON.parse(readFileSync(path, 'utf8')).files : {};
}

function tally(mutants) {
  let detected = 0;
  let valid = 0;
  for (const { status } of mutants) {
    if (DETECTED.has(status)) detected++;
    if (DETECTED.has(status) || UNDETECTED.has(status)) valid++;
  }
  return { detected, valid };
}

const fileCount = (n) => `${n} file${n === 1 ? '' : 's'}`;
const percent = ({ detected, valid }) => (valid ? `${((100 * detected) / valid).toFixed(1)}%` : 'n/a');
const line = (t, what) => `${percent(t).padStart(6)}  ${String(t.detected).padStart(4)}/${String(t.valid).padEnd(4)}  ${what}`;

/** How many mutants Stryker makes of each file as it is now. */
async function mutantsNow(files) {
  if (files.length === 0) return new Map();
  const quiet = () => false;
  const logger = { isTraceEnabled: quiet, isDebugEnabled: quiet, isInfoEnabled: quiet, isWarnEnabled: quiet, isErrorEnabled: () => true, isFatalEnabled: () => true };
  for (const level of ['trace', 'debug', 'info', 'warn']) logger[level] = () => {};
  logger.error = logger.fatal = console.error;
  const input = files.map((name) => ({ name, content: readFileSync(name, 'utf8'), mutate: true }));
  const { mutants } = await new Instrumenter(logger).instrument(input, { plugins: null, excludedMutations: [], ignorers: [] });
  const counts = new Map(files.map((f) => [f, 0]));
  for (const m of mutants) counts.set(m.fileName, counts.get(m.fileName) + 1);
  return counts;
}

/**
 * Prints the score of each file the given targets mutate, then, for each folder those files are in, the score
 * over every file of the folder that has a kept report (whichever target it came from), the files and mutants
 * not scored, and the scored files whose source changed since their run (their verdicts are of older code).
 */
export async function printScores(targets) {
  const scored = new Map(); // file -> { mutants, changed }
  for (const name of Object.keys(TARGETS)) {
    for (const [file, { mutants, source }] of Object.entries(lastReport(name))) {
      scored.set(file, { mutants, changed: !existsSync(file) || readFileSync(file, 'utf8') !== source, target: name });
    }
  }
  const asked = new Set(targets);
  const shown = [...scored].filter(([, s]) => asked.has(s.target)).sort(([a], [b]) => a.localeCompare(b));
  console.log('\nmutation score (detected / valid mutants), from the reports in reports/mutation/');
  for (const [file, s] of shown) console.log(line(tally(s.mutants), `${file}${s.changed ? '  (changed since this run)' : ''}`));
  const folders = FOLDERS.filter((d) => targets.some((t) => TARGETS[t].mutate.some((g) => g.startsWith(`${d}/`))));
  for (const folder of folders) {
    const files = testFiles([folder], '.ts');
    const inFolder = files.filter((f) => scored.has(f));
    const notScored = files.filter((f) => !scored.has(f));
    const changed = inFolder.filter((f) => scored.get(f).changed);
    const now = await mutantsNow([...notScored, ...changed]);
    const sum = (list) => list.reduce((n, f) => n + now.get(f), 0);
    const t = tally(inFolder.flatMap((f) => scored.get(f).mutants));
    console.log(line(t, `${folder}/: ${inFolder.length} of its ${files.length} files scored`));
    const byTarget = Object.keys(TARGETS)
      .map((name) => [name, notScored.filter((f) => TARGETS[name].mutate.some((g) => matchesGlob(f, g)))])
      .filter(([, list]) => list.length > 0)
      .map(([name, list]) => `${name}: ${fileCount(list.length)}, ${sum(list)} mutants`);
    console.log(`        not scored yet: ${fileCount(notScored.length)}, ${sum(notScored)} mutants${byTarget.length ? ` (${byTarget.join('; ')})` : ''}`);
    if (changed.length) console.log(`        changed since their run (scores of the older code): ${changed.map((f) => `${f.slice(folder.length + 1)} (${now.get(f)} mutants now)`).join(', ')}`);
  }
}
