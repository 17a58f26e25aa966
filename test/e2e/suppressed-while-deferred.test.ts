// Suppression of a send waiting for a retry, as deployed: a mail server answers 421 to one reader's
// first drip step and first campaign message; the reader then uses the one-click unsubscribe on
// `notify serve`; a separate `notify worker` running past both retry times delivers neither, ends
// the enrollment and the campaign, the campaign before the retry time (nothing waits for her).
// Configured only by notify.config.json (strings); the backoff is made short through
// retryBackoffMinutes (0.5 min = 30 s), not by a fake clock.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';

const CSV = ['email,name', 'ann@example.com,Ann', 'slow@example.com,Slow'].join('\n');
const ADMIN = 'e2e-admin-token-0123456789';

describeEachEngine('as deployed: a deferred drip step and campaign send of a reader who unsubscribes are never delivered', (engine) => {
  let d: Deployment;
  let server: string;
  before(async () => {
    d = await Deployment.open(engine, { config: { retryBackoffMinutes: '0.5', maxRetries: '3', adminToken: ADMIN } });
    server = (await d.serve()).url;
  });
  after(() => d?.close());

  /**
   * A welcome sequence on `list` and the list imported from `csv`: the drip run and then a campaign
   * run to the list each deliver to everyone but `slow`, whose first two attempts the sink answers
   * 421 (both deferred). Returns the campaign's id.
   */
  async function deferBoth(list: string, csv: string, slow: string): Promise<string> {
    const created = await fetch(`${server}/notify/api/v1/sequences`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${list}-welcome`, trigger: { listJoined: list }, steps: [{ delayMinutes: 0, subject: 'Welcome {{ contact.name }}', text: 'Hello {{ contact.name }}' }] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    d.sink.failFor(slow, 2);
    d.writeFile(`${list}.csv`, csv);
    await d.cli(['contacts:import', `${list}.csv`, '--list', list]);
    assert.match(await d.cli(['notify:process-drips']), /drips: sent 1, retried 1, failed 0 \(of 2 due\)/);
    const id = (await d.cli(['campaigns:create', '--subject', `News for ${list}`, '--text', 'Hi {{ contact.name }}', '--list', list])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), /sent 1, failed 0, suppressed 0, deferred 1/);
    return id;
  }

  /** the step row cancelled, the campaign send suppressed (neither waiting for a retry), the enrollment cancelled */
  async function assertSettled(email: string): Promise<void> {
    const rows = await queryRows<{ status: string; campaign_id: number | null; next_attempt_at: number | null }>(d.database, 'select status, campaign_id, next_attempt_at from notify_sends where to_email = ? order by id', [email]);
    assert.deepEqual(
      rows.map((r) => [r.campaign_id === null ? 'step' : 'campaign', r.status, r.next_attempt_at]),
      [
        ['step', 'cancelled', null],
        ['campaign', 'suppressed', null],
      ],
    );
    const [enrollment] = await queryRows<{ status: string }>(d.database, 'select e.status from notify_enrollments e join notify_contacts c on c.id = e.contact_id where c.email = ?', [email]);
    assert.equal(enrollment.status, 'cancelled');
  }

  test('421 to both first attempts, one-click unsubscribe, then the worker: no message reaches her, step cancelled, send suppressed, campaign sent', async () => {
    const id = await deferBoth('readers', CSV, 'slow@example.com');
    const waiting = await queryRows<{ status: string; next_attempt_at: number }>(d.database, 'select status, next_attempt_at from notify_sends where to_email = ? order by id', ['slow@example.com']);
    assert.deepEqual(
      waiting.map((r) => r.status),
      ['deferred', 'deferred'],
    );

    const [slow] = await queryRows<{ unsubscribe_token: string }>(d.database, 'select unsubscribe_token from notify_contacts where email = ?', ['slow@example.com']);
    const res = await fetch(`${server}/notify/unsubscribe/${slow.unsubscribe_token}`, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 200);

    const retryAt = Math.max(...waiting.map((r) => Number(r.next_attempt_at)));
    const worker = await d.worker(0.3);
    await worker.waitForOutput(new RegExp(`campaign ${id}: .*campaign sent, nothing remains`), 60_000).catch((err) => assert.fail(`${err.message}\n${d.describe()}`));
    assert.ok(Date.now() < retryAt, 'the campaign ended without waiting for her retry time');
    // past both retry times with the worker polling: what a retry would have done, it has done by now
    await waitUntil(() => (Date.now() > retryAt + 3_000 ? true : undefined), Math.max(0, retryAt - Date.now()) + 30_000, 'past the retry time');
    await worker.stop();

    assert.equal(d.sink.attempts.get('slow@example.com'), 2, 'the two refused attempts, nothing after');
    assert.equal(d.sink.messages.filter((m) => m.envelope.to.includes('slow@example.com')).length, 0);
    await assertSettled('slow@example.com');
    assert.deepEqual(await queryRows(d.database, 'select status from notify_campaigns where id = ?', [Number(id)]), [{ status: 'sent' }]);
    const stats = JSON.parse(await d.cli(['stats', id, '--json']));
    assert.deepEqual([stats.stats.total, stats.stats.sent, stats.stats.failed], [2, 1, 0]);
  });

  test('the same suppression by contacts:import with a status column: settled at once, no worker needed, nothing delivered', async () => {
    const id = await deferBoth('members', ['email,name', 'bea@example.com,Bea', 'late@example.com,Late'].join('\n'), 'late@example.com');

    // the address bounced at another provider: the import says so
    d.writeFile('bounced.csv', ['email,status', 'late@example.com,bounced'].join('\n'));
    assert.match(await d.cli(['contacts:import', 'bounced.csv']), /updated 1/);
    // settled by the import itself: no run or worker came since
    await assertSettled('late@example.com');
    const events = await queryRows<{ type: string }>(d.database, 'select v.type from notify_events v join notify_contacts c on c.id = v.contact_id where c.email = ?', ['late@example.com']);
    assert.deepEqual(
      events.map((e) => e.type),
      ['bounce'],
    );
    assert.match(await d.cli(['notify:send-campaign', id]), /campaign sent, nothing remains/);
    assert.equal(d.sink.attempts.get('late@example.com'), 2, 'the two refused attempts, nothing after');
    assert.equal(d.sink.messages.filter((m) => m.envelope.to.includes('late@example.com')).length, 0);
  });
});
