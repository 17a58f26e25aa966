// The bounce mailbox as deployed: notify.config.json names a real Postfix as the mailer and a real
// Dovecot mailbox; a campaign goes out through Postfix to an unknown local user, Postfix writes the
// DSN to the VERP return path, and the `notify worker` process reads it and bounces the contact.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { imapClient, mailboxUrl, NO_IMAP } from '../bounces/imap.ts';
import { ENGINES } from '../helpers/engines.ts';
import { contactStatus, queryRows } from './database.ts';
import { Deployment, type NotifyProcess, waitUntil } from './harness.ts';

const POSTFIX_URL = process.env.NOTIFY_TEST_POSTFIX_URL;
const SKIP = NO_IMAP || (POSTFIX_URL ? false : 'NOTIFY_TEST_POSTFIX_URL is not set (scripts/imap-test-server.sh postfix-url)');

for (const engine of ENGINES) {
  describe(`as deployed: a Postfix DSN read by notify worker from the bounce mailbox [${engine}]`, { skip: SKIP }, () => {
    // scripts/imap-test-server.sh delivers bounces+*@e2e-<engine>.bounce.test into folder e2e-<engine>
    const bounceDomain = `e2e-${engine}.bounce.test`;
    const folder = `e2e-${engine}`;
    let d: Deployment;
    let worker: NotifyProcess | undefined;

    before(async () => {
      const client = await imapClient();
      await client.mailboxCreate(folder).catch(() => {});
      await client.logout();
      d = await Deployment.open(engine, { config: { mailer: POSTFIX_URL, bounceMailbox: mailboxUrl({ folder }), bounceDomain } });
    });
    after(() => d?.close());

    test('campaign to an unknown user -> Postfix DSN -> the worker marks the send bounced and the contact bounced', async () => {
      const lost = `nouser-${randomBytes(4).toString('hex')}@mta.notify.test`;
      d.writeFile('readers.csv', ['email,name', `${lost},Lost`].join('\n'));
      assert.match(await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']), /created 1/);
      const id = (await d.cli(['campaigns:create', '--subject', 'Spring news', '--html', '<p>Hello</p>', '--list', 'readers'])).trim().split('\n')[0];
      assert.match(await d.cli(['notify:send-campaign', id]), /sent 1, failed 0/);

      worker = await d.worker(0.5);
      await worker.waitForOutput(/bounce mailbox: 1 processed, 0 left for a person, 0 to retry/, 40_000);
      assert.equal(await contactStatus(d.database, lost), 'bounced', d.describe());
      const events = await waitUntil(
        async () => {
          const rows = await queryRows<{ type: string }>(d.database, `select e.type from notify_events e join notify_sends s on s.id = e.send_id join notify_contacts c on c.id = s.contact_id where c.email = '${lost}'`);
          return rows.length > 0 ? rows : undefined;
        },
        10_000,
        'the bounce event row',
      );
      assert.deepEqual(
        events.map((e) => e.type),
        ['bounce'],
      );
      assert.equal(await worker.stop(), 0);
    });
  });
}
