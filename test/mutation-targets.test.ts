import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { matchesGlob, resolve } from 'node:path';
import { test } from 'node:test';
import { GROUPS, TARGETS, targetTests } from '../scripts/mutation-targets.mjs';
import { testFiles } from '../scripts/test-files.mjs';

const ROOT = resolve(import.meta.dirname, '..');

test('the group core mutates every file of src/core/ in exactly one target', () => {
  const files = testFiles([resolve(ROOT, 'src/core')], '.ts').map((f) => f.slice(ROOT.length + 1));
  assert.ok(files.length > 50);
  const owners = files.map((f) => [f, GROUPS.core.filter((t) => TARGETS[t].mutate.some((g) => matchesGlob(f, g)))] as const);
  assert.deepEqual(
    owners.filter(([, targets]) => targets.length !== 1),
    [],
    'files in no target or in more than one',
  );
});

test("every group names known targets, and every target's tests list only files or folders that exist and runs some", () => {
  for (const [group, targets] of Object.entries(GROUPS)) for (const t of targets) assert.ok(TARGETS[t], `${group}: ${t}`);
  for (const [name, { tests }] of Object.entries(TARGETS)) {
    for (const path of tests) assert.ok(testFiles([resolve(ROOT, path)]).length > 0, `${name}: ${path}`);
    assert.ok(targetTests(name).length > 0, name);
  }
});

test('--scores gives each folder its score over the files scored and says how many files and mutants are not', () => {
  const out = execFileSync(process.execPath, ['--no-warnings', 'scripts/mutation.mjs', '--scores'], { cwd: ROOT, encoding: 'utf8' });
  for (const folder of ['src/core', 'src/webhooks']) {
    const files = testFiles([resolve(ROOT, folder)], '.ts').length;
    const summary = new RegExp(`(\\d+\\.\\d%|n/a)\\s+(\\d+)/(\\d+)\\s+${folder}/: (\\d+) of its ${files} files scored\\n\\s+not scored yet: (\\d+) files?, (\\d+) mutants`);
    const m = out.match(summary);
    assert.ok(m, `${folder} summary in:\n${out}`);
    assert.equal(Number(m[4]) + Number(m[5]), files, 'scored and not scored make the whole folder');
    if (Number(m[5]) > 0) assert.ok(Number(m[6]) > 0, 'files not scored have mutants counted');
  }
});
