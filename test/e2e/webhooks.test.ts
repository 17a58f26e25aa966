// Each built-in webhook driver in a `notify serve` of its own, configured by a config file of
// strings, receiving its provider's documented example payloads signed the way that provider
// signs them. The SES/SNS process gets Amazon's certificate host answered by a preload (the only
// host it answers), so no request leaves the machine.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TEST_REGION, TEST_TOPIC } from '../webhooks/helpers.ts';
import { contactStatus } from './database.ts';
import { Deployment, describeEachEngine, freePort } from './harness.ts';
import { type DriverName, providerRigs, snsSubscriptionConfirmation } from './webhook-requests.ts';

const PRELOAD = pathToFileURL(fileURLToPath(new URL('./sns-certificate-preload.mjs', import.meta.url))).href;
const TEST_CERT_FILE = fileURLToPath(new URL('../webhooks/fixtures/test-signing-cert.pem', import.meta.url));
const SNS_HOST = `sns.${TEST_REGION}.amazonaws.com`;

const rigs = providerRigs();
const allRigs = Object.values(rigs);
const address = (driver: DriverName, what: string) => `${driver}-${what}@example.com`;
/** The addresses each case changes (or must leave alone), all subscribed before the webhooks arrive. */
const ADDRESSES = [
  ...allRigs.flatMap((r) => ['bounce', 'complaint', 'forged'].map((w) => address(r.driver, w))),
  ...['hard-bounce', 'spam-complaint', 'manual'].map((w) => address('postmark', `suppressed-${w}`)),
  ...['bounced', 'spam', 'unsubscribed'].map((w) => address('sendgrid', `dropped-${w}`)),
];

describeEachEngine('signed provider webhooks, one notify serve per built-in driver', (engine) => {
  let d: Deployment;
  const servers = {} as Record<DriverName, string>;
  let snsLog = '';
  const post = (driver: DriverName, init: RequestInit) => fetch(`${servers[driver]}/notify/webhook`, init);
  const statuses = (emails: string[]) => Promise.all(emails.map((e) => contactStatus(d.database, e)));

  before(async () => {
    d = await Deployment.open(engine);
    snsLog = join(d.dir, 'sns-requests.log');
    const serve = async (rig: (typeof allRigs)[number]) => {
      // captureRateLimit 0: the contacts below arrive through one process's capture form from one address.
      d.writeConfig(`${rig.driver}.config.json`, { ...d.defaults(), ...rig.config, captureRateLimit: '0' });
      const env = rig.driver === 'ses' ? { NODE_OPTIONS: `--import ${PRELOAD}`, E2E_SNS_HOST: SNS_HOST, E2E_SNS_CERT_FILE: TEST_CERT_FILE, E2E_SNS_LOG: snsLog } : undefined;
      const { url } = await d.serve({ port: await freePort(), config: `${rig.driver}.config.json`, env, name: `serve (${rig.driver})` });
      servers[rig.driver] = url;
    };
    // One process creates the schema before the others start: processes migrating one fresh SQLite
    // file at the same moment can fail ("duplicate column name").
    await serve(rigs.mailgun);
    // The contacts sign up through the capture form of the running process (no CLI process to
    // start) while the other processes start.
    const signUp = async () => {
      for (const email of ADDRESSES) {
        const res = await fetch(`${servers.mailgun}/notify/capture`, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams({ email }) });
        assert.equal(res.status, 200, `capture of ${email}: ${await res.text()}`);
      }
    };
    await Promise.all([signUp(), ...[rigs.ses, rigs.postmark, rigs.sendgrid].map(serve)]);
    assert.deepEqual(new Set(await statuses(ADDRESSES)), new Set(['subscribed']));
  });
  after(() => d?.close());

  for (const rig of allRigs) {
    test(`${rig.driver}: a bounce and a complaint change the contacts' status; a forged one is refused and changes nothing`, async () => {
      const forged = await post(rig.driver, rig.forged(address(rig.driver, 'forged')));
      assert.equal(forged.status, 403);
      assert.equal(await contactStatus(d.database, address(rig.driver, 'forged')), 'subscribed');

      const bounce = await post(rig.driver, rig.bounce(address(rig.driver, 'bounce')));
      assert.equal(bounce.status, 200, await bounce.clone().text());
      const complaint = await post(rig.driver, rig.complaint(address(rig.driver, 'complaint')));
      assert.equal(complaint.status, 200, await complaint.clone().text());
      assert.equal(await contactStatus(d.database, address(rig.driver, 'bounce')), 'bounced');
      assert.equal(await contactStatus(d.database, address(rig.driver, 'complaint')), 'complained');
    });
  }

  test('postmark: a SubscriptionChange suppressing for HardBounce bounces the contact, for SpamComplaint marks it complained, a manual one changes nothing', async () => {
    const cases = [
      ['HardBounce', address('postmark', 'suppressed-hard-bounce'), 'bounced'],
      ['SpamComplaint', address('postmark', 'suppressed-spam-complaint'), 'complained'],
      ['ManualSuppression', address('postmark', 'suppressed-manual'), 'subscribed'],
    ] as const;
    const forged = await post('postmark', { ...rigs.postmark.subscriptionChange(cases[0][1], 'HardBounce'), headers: { 'content-type': 'application/json' } });
    assert.equal(forged.status, 403, 'no credentials, no change');
    assert.equal(await contactStatus(d.database, cases[0][1]), 'subscribed');
    for (const [reason, email] of cases) {
      const res = await post('postmark', rigs.postmark.subscriptionChange(email, reason));
      assert.equal(res.status, 200, `${reason}: ${await res.clone().text()}`);
    }
    assert.deepEqual(await statuses(cases.map((c) => c[1])), cases.map((c) => c[2]));
  });

  test('sendgrid: in one signed batch, dropped for Bounced Address bounces the contact, for Spam Reporting Address marks it complained, for Unsubscribed Address changes nothing', async () => {
    const cases = [
      ['Bounced Address', address('sendgrid', 'dropped-bounced'), 'bounced'],
      ['Spam Reporting Address', address('sendgrid', 'dropped-spam'), 'complained'],
      ['Unsubscribed Address', address('sendgrid', 'dropped-unsubscribed'), 'subscribed'],
    ] as const;
    const batch = rigs.sendgrid.dropped(cases.map(([reason, email]) => ({ email, reason })));
    const tampered = await post('sendgrid', { ...batch, body: String(batch.body).replace('Unsubscribed Address', 'Bounced Address') });
    assert.equal(tampered.status, 403, 'a batch changed after signing is refused');
    assert.deepEqual(await statuses(cases.map((c) => c[1])), ['subscribed', 'subscribed', 'subscribed']);
    const res = await post('sendgrid', batch);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await statuses(cases.map((c) => c[1])), cases.map((c) => c[2]));
  });

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
