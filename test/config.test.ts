import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { envName, loadConfig } from '../src/config.ts';
import { isNotifyError } from '../src/errors.ts';

const noFile = { configFile: false as const, env: {} };

test('defaults are the documented ones', async () => {
  const c = await loadConfig({}, noFile);
  assert.equal(c.batchSize, 200);
  assert.equal(c.retryDelayMinutes, 5);
  assert.equal(c.maxRetries, 3);
  assert.equal(c.staleLockMinutes, 30);
  assert.equal(c.throttleMs, 0);
  assert.equal(c.captureRateLimit, 10);
  assert.equal(c.honeypot, true);
  assert.equal(c.testMode, false);
  assert.equal(c.trackIpAddress, false);
  assert.equal(c.webhookDriver, '');
  assert.equal(c.trackingHost, '');
  assert.equal(c.fromName, '');
  assert.equal(c.database, 'sqlite:./notify.db');
  assert.equal(c.mailer, 'outbox:./outbox');
  assert.equal(c.trustProxy, false);
  assert.equal(c.unsubscribeConfirm, false);
  assert.ok(Object.isFrozen(c));
});

test('sources layer: file < env NOTIFY_X < env notify.x < options', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.json'), JSON.stringify({ batchSize: 10, throttleMs: 7, fromName: 'File' }));
  const env = { NOTIFY_BATCH_SIZE: '20', 'notify.throttleMs': '9', NOTIFY_THROTTLE_MS: '8', 'notify.testMode': 'true' };
  const c = await loadConfig({ fromName: 'Opt' }, { cwd: dir, env });
  assert.equal(c.batchSize, 20);
  assert.equal(c.throttleMs, 9);
  assert.equal(c.testMode, true);
  assert.equal(c.fromName, 'Opt');
  assert.equal(envName('staleLockMinutes'), 'NOTIFY_STALE_LOCK_MINUTES');
});

test('a .js config file is read too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.js'), 'export default { maxRetries: 9 };');
  assert.equal((await loadConfig({}, { cwd: dir, env: {} })).maxRetries, 9);
});

async function configError(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (err) {
    assert.ok(isNotifyError(err), String(err));
    return err.message;
  }
  assert.fail('expected a configuration error');
}

test('a wrong value names the option and the source it came from', async () => {
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { 'notify.batchSize': 'abc' } })), /'batchSize' from environment variable notify\.batchSize must be a number/);
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { NOTIFY_RETRY_DELAY_MINUTES: '-5' } })), /'retryDelayMinutes' from environment variable NOTIFY_RETRY_DELAY_MINUTES must be at least 0/);
  assert.match(await configError(() => loadConfig({ webhookDriver: 'sparkpost' }, noFile)), /'webhookDriver' from createNotify\(\) options must be empty, one of ses/);
  assert.match(await configError(() => loadConfig({ database: 'mysql://x' }, noFile)), /'database' from createNotify\(\) options must be 'sqlite/);
  assert.match(await configError(() => loadConfig({ testMode: 'maybe' as never }, noFile)), /'testMode'.*must be true or false/);
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.json'), JSON.stringify({ batchSize: 0 }));
  assert.match(await configError(() => loadConfig({}, { cwd: dir, env: {} })), /'batchSize' from config file .*notify\.config\.json must be at least 1/);
});

test('typos and broken files are errors, not silently ignored', async () => {
  assert.match(await configError(() => loadConfig({ batchsize: 5 } as never, noFile)), /Unknown option 'batchsize'/);
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { 'notify.bachSize': '5' } })), /Unknown option 'bachSize' \(from environment variable notify\.bachSize\)/);
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.json'), '{ not json');
  assert.match(await configError(() => loadConfig({}, { cwd: dir, env: {} })), /Could not read config file/);
  assert.match(await configError(() => loadConfig({}, { configFile: 'missing.json', env: {}, cwd: dir })), /does not exist/);
});

test('list options accept comma-separated env values', async () => {
  const c = await loadConfig({}, { configFile: false, env: { 'notify.snsTopicArns': 'arn:a, arn:b' } });
  assert.deepEqual(c.snsTopicArns, ['arn:a', 'arn:b']);
});
