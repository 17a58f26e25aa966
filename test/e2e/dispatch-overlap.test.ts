// The send loop overlaps each send's start commit with its SMTP transaction, as deployed: the CLI
// sends a campaign to a real SMTP server through `mailer: smtp://...?maxConnections=2`. When a
// message's end of DATA reaches the server, its row is already committed `sending`, and no more
// rows are `sending` than the pool has connections (what a crash would leave in doubt). Then
// everyone has it once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';

const PEOPLE = 20;

describeEachEngine('as deployed: the end of DATA waits for the send to be committed', (engine) => {
  let d: Deployment;
  before(async () => {
    d = await Deployment.open(engine);
    d.writeConfig('notify.config.json', { ...d.defaults(), mailer: `${d.sink.url}?maxConnections=2` });
    d.writeFile('readers.csv', ['email', ...Array.from({ length: PEOPLE }, (_, i) => `r${i}@example.com`)].join('\n'));
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
  });
  after(() => d?.close());

  test('a message the server holds is `sending` in the database; at most maxConnections rows are; everyone gets it once', async () => {
    const id = (await d.cli(['campaigns:create', '--subject', 'Overlap', '--text', 'hi', '--list', 'readers'])).trim().split('\n')[0];
    const held = d.sink.holdFor('r7@example.com');
    const run = d.run(['notify:send-campaign', id]);
    await held.reached;
    const rows = await queryRows<{ email: string; status: string }>(d.database, 'select c.email, s.status from notify_sends s join notify_contacts c on c.id = s.contact_id where s.campaign_id = ?', [Number(id)]);
    held.release();
    assert.equal(rows.find((r) => r.email === 'r7@example.com')?.status, 'sending', 'committed before its end of DATA arrived');
    const sending = rows.filter((r) => r.status === 'sending').length;
    assert.ok(sending >= 1 && sending <= 2, `at most maxConnections (2) rows in doubt, saw ${sending}`);
    const done = await run;
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, new RegExp(`sent ${PEOPLE}, failed 0`));
    const got = d.sink.messages.filter((m) => m.parsed.subject === 'Overlap').map((m) => m.envelope.to[0]);
    assert.equal(got.length, PEOPLE);
    assert.equal(new Set(got).size, PEOPLE, 'nobody twice');
  });
});
