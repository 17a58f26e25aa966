// Each built-in webhook driver in a `notify serve` of its own, configured by a config file of
// strings, receiving its provider's documented example payloads signed the way that provider
// signs them. The SES/SNS process gets Amazon's certificate host answered by a preload (the only
// host it answers), so no request leaves the machine.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ENGINES } from '../helpers/engines.ts';
import { TEST_REGION, TEST_TOPIC } from '../webhooks/helpers.ts';
import { contactStatus } from './database.ts';
import { Deployment, freePort } from './harness.ts';
import { type DriverName, providerRigs, snsSubscriptionConfirmation } from './webhook-requests.ts';

const PRELOAD = pathToFileURL(fileURLToPath(new URL('./sns-certificate-preload.mjs', import.meta.url))).href;
const TEST_CERT_FILE = fileURLToPath(new URL('../webhooks/fixtures/test-signing-cert.pem', import.meta.url));
const SNS_HOST = `sns.${TEST_REGION}.amazonaws.com`;

const rigs = providerRigs();
const address = (driver: DriverName, what: string) => `${driver}-${what}@example.com`;

for (const engine of ENGINES) {
  describe(`signed provider webhooks, one notify serve per built-in driver [${engine}]`, () => {
    let d: Deployment;
    const servers = {} as Record<DriverName, string>;
    let snsLog = '';

    before(async () => {
      d = await Deployment.open(engine);
      snsLog = join(d.dir, 'sns-requests.log');
      const rows = rigs.flatMap((r) => ['bounce', 'complaint', 'forged'].map((w) => address(r.driver, w)));
      d.writeFile('hooks.csv', ['email', ...rows].join('\n'));
      assert.match(await d.cli(['contacts:import', 'hooks.csv']), /created 12, updated 0, unchanged 0, rejected 0/);
      await Promise.all(
        rigs.map(async (rig) => {
          d.writeConfig(`${rig.driver}.config.json`, { ...d.defaults(), ...rig.config });
          const env = rig.driver === 'ses' ? { NODE_OPTIONS: `--import ${PRELOAD}`, E2E_SNS_HOST: SNS_HOST, E2E_SNS_CERT_FILE: TEST_CERT_FILE, E2E_SNS_LOG: snsLog } : undefined;
          const { url } = await d.serve({ port: await freePort(), config: `${rig.driver}.config.json`, env, name: `serve (${rig.driver})` });
          servers[rig.driver] = url;
        }),
      );
    });
    after(() => d?.close());

    for (const rig of rigs) {
      test(`${rig.driver}: a bounce and a complaint change the contacts' status; a forged one is refused and changes nothing`, async () => {
        const post = (init: RequestInit) => fetch(`${servers[rig.driver]}/notify/webhook`, init);
        const forged = await post(rig.forged(address(rig.driver, 'forged')));
        assert.equal(forged.status, 403);
        assert.equal(await contactStatus(d.database, address(rig.driver, 'forged')), 'subscribed');

        const bounce = await post(rig.bounce(address(rig.driver, 'bounce')));
        assert.equal(bounce.status, 200, await bounce.clone().text());
        const complaint = await post(rig.complaint(address(rig.driver, 'complaint')));
        assert.equal(complaint.status, 200, await complaint.clone().text());
        assert.equal(await contactStatus(d.database, address(rig.driver, 'bounce')), 'bounced');
        assert.equal(await contactStatus(d.database, address(rig.driver, 'complaint')), 'complained');
      });
    }

    test('ses: the certificate came from the preloaded SNS host, and a subscription confirmation is confirmed there', async () => {
      const res = await fetch(`${servers.ses}/notify/webhook`, snsSubscriptionConfirmation('e2e-token-1'));
      assert.equal(res.status, 200, await res.clone().text());
      assert.ok(existsSync(snsLog), 'the SES driver fetched from the SNS host');
      const requests = readFileSync(snsLog, 'utf8').trim().split('\n');
      assert.ok(requests.some((r) => /^GET https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com\/SimpleNotificationService-\w+\.pem$/.test(r)), requests.join('\n'));
      const confirm = requests.map((r) => new URL(r.split(' ')[1])).find((u) => u.searchParams.get('Action') === 'ConfirmSubscription');
      assert.ok(confirm, requests.join('\n'));
      assert.equal(confirm.host, SNS_HOST);
      assert.equal(confirm.searchParams.get('TopicArn'), TEST_TOPIC);
      assert.equal(confirm.searchParams.get('Token'), 'e2e-token-1');
    });
  });
}
