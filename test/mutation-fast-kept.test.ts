// A rerun of the in-process mutation runner keeps the detected verdicts of files whose source did not change
// (scripts/mutation-fast-kept.mjs). Stryker numbers mutants across all of a target's files, so a file that gains
// a mutant shifts the ids of every file after it: verdicts are matched by place and change, not by id.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { keptVerdictOf, keptVerdicts, type Report, reportLocation } from '../scripts/mutation-fast-kept.mjs';

// loaded at run time, as in test/mutation-fast.test.ts: the instrumenter imports optional parsers
const BUILD = pathToFileURL(resolve('scripts/mutation-fast-build.mjs')).href;

type Mutant = { id: string; fileName: string; mutatorName: string; replacement: string; location: { start: { line: number; column: number }; end: { line: number; column: number } } };

/** A report as the runner writes it, every mutant given `status`. */
function reportOf(sources: Record<string, string>, mutants: Mutant[], status: string): Report {
  const files: Report['files'] = Object.fromEntries(Object.entries(sources).map(([path, source]) => [path, { source, mutants: [] }]));
  for (const m of mutants) files[m.fileName].mutants.push({ id: m.id, mutatorName: m.mutatorName, replacement: m.replacement, location: reportLocation(m.location), status });
  return { files };
}

test('an earlier file that gains a mutant: the unchanged later file keeps every verdict, the changed one none', async () => {
  const { instrument } = await import(BUILD);
  const dir = mkdtempSync(join(resolve('.test-build'), 'mutation-kept-'));
  try {
    const first = relative(process.cwd(), join(dir, 'a-first.ts'));
    const later = relative(process.cwd(), join(dir, 'b-later.ts'));
    writeFileSync(first, 'export const over = (n: number) => n > 1;\n');
    writeFileSync(later, 'export const clamp = (n: number, max: number) => (n > max ? max : n);\nexport const half = (n: number) => n / 2;\n');
    const before = await instrument([first, later]);
    const report = reportOf(before.sources, before.mutants, 'Killed');

    writeFileSync(first, 'export const over = (n: number) => n > 1;\nexport const under = (n: number) => n < 1;\n');
    const after = await instrument([first, later]);
    const laterBefore = before.mutants.filter((m: Mutant) => m.fileName === later);
    const laterAfter = after.mutants.filter((m: Mutant) => m.fileName === later);
    assert.ok(laterAfter.length >= 3, `the later file has mutants (${laterAfter.length})`);
    assert.notDeepEqual(laterAfter.map((m: Mutant) => m.id), laterBefore.map((m: Mutant) => m.id), 'the later file\'s ids shifted');

    const kept = keptVerdicts(report, after.sources);
    for (const m of laterAfter) assert.equal(keptVerdictOf(kept, m)?.status, 'Killed', `${m.mutatorName} -> ${m.replacement} keeps its verdict`);
    for (const m of after.mutants.filter((x: Mutant) => x.fileName === first)) assert.equal(keptVerdictOf(kept, m), undefined, 'a changed file runs again');
    const survived = keptVerdicts(reportOf(before.sources, before.mutants, 'Survived'), before.sources);
    assert.equal(survived.size, 0, 'a surviving mutant is tested again');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
