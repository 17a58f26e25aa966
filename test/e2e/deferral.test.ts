// Deferral as deployed: a mail server that answers 421 to one recipient's first attempt. The CLI's
// run sends the others and defers that one; a separate `notify worker` process retries it after the
// backoff and marks the campaign sent. Configured only by notify.config.json (strings); the backoff
// is made short through the retryBackoffMinutes option (0.02 min = 1.2 s), not by a fake clock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.ts';
import { queryRows } from './database.ts';
import { Deployment, waitUntil } from './harness.ts';

const CSV = ['email,name', 'ann@example.com,Ann', 'slow@example.com,Slow', 'cy@example.com,Cy'].join('\n');

for (const engine of ENGINES) {
  describe(`as deployed: a 421 defers a send, the worker retries it after the backoff [${engine}]`, () => {
    let d: Deployment;
    before(async () => {
      d = await Deployment.open(engine, { config: { retryBackoffMinutes: '0.02', maxRetries: '3' } });
      d.writeFile('readers.csv', CSV);
      await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    });
    after(() => d?.close());

    test('421 first, then 250: deferred with a next attempt, sent once by the worker, stats count it once', async () => {
      d.sink.failFor('slow@example.com', 1);
      const id = (await d.cli(['campaigns:create', '--subject', 'Deferred news', '--text', 'Hello {{ contact.name }}', '--list', 'readers'])).trim().split('\n')[0];
      const run = await d.cli(['notify:send-campaign', id]);
      assert.match(run, new RegExp(`campaign ${id}: sent 2, failed 0, suppressed 0, deferred 1 .*1 waiting for a retry \\(next at `));
      const [row] = await queryRows<{ status: string; attempts: number; next_attempt_at: number; error: string }>(
        d.database,
        'select status, attempts, next_attempt_at, error from notify_sends where to_email = ?',
        ['slow@example.com'],
      );
      assert.deepEqual([row.status, Number(row.attempts)], ['deferred', 1]);
      assert.match(row.error, /421/);
      const stats = JSON.parse(await d.cli(['stats', id, '--json']));
      assert.deepEqual([stats.stats.total, stats.stats.sent, stats.stats.failed], [3, 2, 0], 'a deferred send is neither sent nor failed');
      assert.deepEqual(await queryRows(d.database, 'select status from notify_campaigns where id = ?', [Number(id)]), [{ status: 'sending' }]);

      const worker = await d.worker(0.3);
      await worker.waitForOutput(new RegExp(`campaign ${id}: sent 1, failed 0.* - campaign sent, nothing remains`), 60_000);
      const [done] = await queryRows<{ status: string; attempts: number; sent_at: number }>(d.database, 'select status, attempts, sent_at from notify_sends where to_email = ?', ['slow@example.com']);
      assert.deepEqual([done.status, Number(done.attempts)], ['sent', 2]);
      assert.ok(Number(done.sent_at) >= Number(row.next_attempt_at), 'not retried before its next attempt time');
      const slow = d.sink.messages.filter((m) => m.envelope.to.includes('slow@example.com'));
      assert.equal(slow.length, 1, 'delivered once');
      assert.match(slow[0].parsed.text ?? '', /Hello Slow/);
      assert.equal(d.sink.attempts.get('slow@example.com'), 2);
      await waitUntil(async () => {
        const s = JSON.parse(await d.cli(['stats', id, '--json']));
        return s.stats.sent === 3 ? s : undefined;
      }, 10_000);
      assert.deepEqual(await queryRows(d.database, 'select status from notify_campaigns where id = ?', [Number(id)]), [{ status: 'sent' }]);
      assert.equal(d.sink.messages.filter((m) => m.parsed.subject === 'Deferred news').length, 3, 'three readers, three messages');
    });
  });
}
