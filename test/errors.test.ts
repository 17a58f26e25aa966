import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ErrorCodes } from '../src/errors.ts';

const SRC = join(import.meta.dirname, '..', 'src');

/** Every source file's text, errors.ts (the list itself) left out. */
function sources(): string {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && f !== 'errors.ts')
    .map((f) => readFileSync(join(SRC, f), 'utf8'))
    .join('\n');
}

test('every error code is raised somewhere: a caller can meet each one it may handle', () => {
  const text = sources();
  const never = Object.keys(ErrorCodes).filter((code) => !text.includes(`NotifyError('${code}'`));
  assert.deepEqual(never, []);
});
