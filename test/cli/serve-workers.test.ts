import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { parseWorkers } from '../../src/cli/commands/serve-workers.ts';
import { isNotifyError } from '../../src/errors.ts';
import { CliEnv } from '../reliability/helpers/processes.ts';

describe('notify serve --workers', () => {
  test('takes a whole number from 1 to 64', () => {
    assert.equal(parseWorkers('1'), 1);
    assert.equal(parseWorkers('4'), 4);
    assert.equal(parseWorkers('64'), 64);
    for (const bad of ['0', '-1', '65', '1.5', '2e1', 'two', '', ' ']) {
      assert.throws(
        () => parseWorkers(bad),
        (err) => isNotifyError(err) && err.code === 'INVALID_INPUT' && err.message.includes(`(got ${JSON.stringify(bad)})`),
        `--workers ${JSON.stringify(bad)}`,
      );
    }
  });

  const env = new CliEnv({ database: 'sqlite::memory:', logLevel: 'silent' });
  after(() => env.cleanup());

  test('a bad count is refused before anything starts, exit 1', async () => {
    const r = await env.run(['serve', '--workers', '0', '--port', '0', '--host', '127.0.0.1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--workers must be a whole number from 1 to 64 \(got "0"\) \[INVALID_INPUT\]/);
    assert.doesNotMatch(r.stdout, /listening/);
  });

  test('an in-memory SQLite database is refused: each worker would have its own', async () => {
    const r = await env.run(['serve', '--workers', '2', '--port', '0', '--host', '127.0.0.1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--workers needs a database every worker process opens; sqlite::memory: is private to one process \[INVALID_INPUT\]/);
    assert.doesNotMatch(r.stdout, /listening/);
  });
});
