import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { isNotifyError } from '../../src/errors.ts';

const noFile = { configFile: false as const, envFile: false as const, env: {} };

/** loads options from a .env file, as a deployment does */
async function fromEnvFile(text: string) {
  const dir = mkdtempSync(join(tmpdir(), 'notify-pacing-'));
  writeFileSync(join(dir, '.env'), text);
  return loadConfig({}, { configFile: false, env: {}, cwd: dir });
}

async function refused(load: Promise<unknown>, option: RegExp, says: RegExp) {
  await assert.rejects(load, (err) => {
    assert.ok(isNotifyError(err, 'CONFIG_INVALID'), String(err));
    assert.match(err.message, option);
    assert.match(err.message, says);
    return true;
  });
}

describe('sendRate and domainRates options', () => {
  test('defaults: no limit', async () => {
    const c = await loadConfig({}, noFile);
    assert.equal(c.sendRate, 0);
    assert.deepEqual(c.domainRates, {});
  });

  test('from .env text: numbers, fractions, JSON and the domain=rate list; domains in lower case and punycode', async () => {
    const c = await fromEnvFile('notify.sendRate = 20\nNOTIFY_DOMAIN_RATES="Gmail.COM=5, outlook.com=0.5, bücher.example=2"\n');
    assert.equal(c.sendRate, 20);
    assert.deepEqual(c.domainRates, { 'gmail.com': 5, 'outlook.com': 0.5, 'xn--bcher-kva.example': 2 });
    const json = await fromEnvFile('notify.domainRates = {"yahoo.com": 3}\nNOTIFY_SEND_RATE=0.5\n');
    assert.deepEqual(json.domainRates, { 'yahoo.com': 3 });
    assert.equal(json.sendRate, 0.5);
  });

  test('from a config file object and from createNotify() options', async () => {
    const c = await loadConfig({ sendRate: 10, domainRates: { 'GMAIL.com.': 4 } }, noFile);
    assert.deepEqual([c.sendRate, c.domainRates], [10, { 'gmail.com': 4 }]);
  });

  test('a rate of -1, "fast", Infinity or an empty domain rate is CONFIG_INVALID naming the option', async () => {
    await refused(loadConfig({ sendRate: -1 }, noFile), /'sendRate'/, /0 \(no limit\) or more/);
    await refused(fromEnvFile('notify.sendRate = fast\n'), /'sendRate' from .*\.env/, /must be a number of messages per second \(got "fast"\)/);
    await refused(loadConfig({ sendRate: Number.POSITIVE_INFINITY }, noFile), /'sendRate'/, /number of messages per second/);
    await refused(loadConfig({ domainRates: { 'gmail.com': -1 } }, noFile), /'domainRates\.gmail\.com'/, /more than 0/);
    await refused(loadConfig({ domainRates: { 'gmail.com': 0 } }, noFile), /'domainRates\.gmail\.com'/, /more than 0/);
    await refused(fromEnvFile('notify.domainRates = gmail.com=fast\n'), /'domainRates\.gmail\.com'/, /number of messages per second/);
    await refused(fromEnvFile('notify.domainRates = gmail.com\n'), /'domainRates\.gmail\.com'/, /number of messages per second/);
  });

  test('a domain key with a port, a scheme, an @ or two spellings of one domain is CONFIG_INVALID', async () => {
    await refused(loadConfig({ domainRates: { 'gmail.com:25': 5 } }, noFile), /'domainRates\.gmail\.com:25'/, /no port/);
    await refused(loadConfig({ domainRates: { 'https://gmail.com': 5 } }, noFile), /'domainRates\.https:\/\/gmail\.com'/, /recipient domain/);
    await refused(loadConfig({ domainRates: { 'ann@gmail.com': 5 } }, noFile), /'domainRates\.ann@gmail\.com'/, /recipient domain/);
    await refused(loadConfig({ domainRates: { 'gmail.com': 5, 'GMAIL.COM': 3 } }, noFile), /'domainRates\.GMAIL\.COM'/, /same domain as 'gmail\.com'/);
    await refused(fromEnvFile('notify.domainRates = {"gmail.com": \n'), /'domainRates'/, /must be an object/);
    await refused(loadConfig({ domainRates: [5] as never }, noFile), /'domainRates'/, /must be an object/);
  });

  test('an unknown rateLimitStore scheme is CONFIG_INVALID naming the option and what is accepted', async () => {
    await refused(loadConfig({ rateLimitStore: 'memcached://127.0.0.1:11211', sendRate: 5 }, noFile), /'rateLimitStore'/, /'memory', 'database', 'redis:\/\/\.\.\.' or 'rediss:\/\/\.\.\.'/);
  });
});
