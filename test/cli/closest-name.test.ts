import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closestName } from '../../src/closest-name.ts';

const COMMANDS = ['migrate', 'contacts:import', 'stats', 'serve', 'notify:send-campaign', 'campaigns:create', 'notify:process-drips', 'worker', 'demo'];
const withoutNamespace = (c: string) => [c, c.replace(/^notify:/, '')];

test('closest command: the namespace left out, a letter missing, two letters swapped, a wrong plural; nothing for nonsense', () => {
  assert.equal(closestName('send-campaign', COMMANDS, withoutNamespace), 'notify:send-campaign');
  assert.equal(closestName('process-drips', COMMANDS, withoutNamespace), 'notify:process-drips');
  assert.equal(closestName('stat', COMMANDS, withoutNamespace), 'stats');
  assert.equal(closestName('sever', COMMANDS, withoutNamespace), 'serve');
  assert.equal(closestName('wokrer', COMMANDS, withoutNamespace), 'worker');
  assert.equal(closestName('campaign:create', COMMANDS, withoutNamespace), 'campaigns:create');
  assert.equal(closestName('Migrate', COMMANDS, withoutNamespace), 'migrate');
  assert.equal(closestName('frobnicate', COMMANDS, withoutNamespace), undefined);
  assert.equal(closestName('x', COMMANDS, withoutNamespace), undefined);
  assert.equal(closestName('deploy', COMMANDS, withoutNamespace), undefined);
});
