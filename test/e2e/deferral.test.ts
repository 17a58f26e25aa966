// Deferral as deployed: a mail server that answers 421 to one recipient's first attempt. The CLI's
// run sends the others and defers that one; a separate `notify worker` process retries it after the
// backoff and marks the campaign sent. Configured only by notify.config.json (strings); the backoff
// is made short through the retryBackoffMinutes option (0.02 min = 1.2 s), not by a fake clock.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';

const CSV = ['email,name', 'ann@example.com,Ann', 'slow@example.com,Slow', 'cy@example.com,Cy'].join('\n');

describeEachEngine('as deployed: a 421 defers a send, the worker retries it after the backoff', (engine) => {
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

describeEachEngine('as deployed: a drip step deferred by a 421 is retried when due, not at the next interval', (engine) => {
  let d: Deployment;
  let server: string;
  before(async () => {
    d = await Deployment.open(engine, { config: { retryBackoffMinutes: '0.05', maxRetries: '3', adminToken: 'e2e-admin-token-0123456789' } });
    server = (await d.serve()).url;
  });
  after(() => d?.close());

  test('421 first, then 250: the worker (interval 120 s) wakes at the retry 3 s later and delivers it once', async () => {
    const created = await fetch(`${server}/notify/api/v1/sequences`, {
      method: 'POST',
      headers: { authorization: 'Bearer e2e-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'welcome', trigger: { listJoined: 'readers' }, steps: [{ delayMinutes: 0, subject: 'Welcome {{ contact.name }}', text: 'Hello {{ contact.name }}' }] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    d.sink.failFor('slow@example.com', 1);
    d.writeFile('readers.csv', CSV);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);

    const started = Date.now();
    const worker = await d.worker(120);
    await worker.waitForOutput(/drips: sent 2, retried 1, failed 0 \(of 3 due\)/, 60_000);
    const [deferred] = await queryRows<{ status: string; next_attempt_at: number; error: string }>(d.database, 'select status, next_attempt_at, error from notify_sends where to_email = ?', ['slow@example.com']);
    assert.ok(['deferred', 'sent'].includes(deferred.status), deferred.status);
    await worker.waitForOutput(/drips: sent 1, retried 0, failed 0 \(of 1 due\)/, 90_000).catch((err) => assert.fail(`${err.message}\n${d.describe()}`));
    assert.ok(Date.now() - started < 100_000, 'retried before the 120 s interval would have run another round');
    const [row] = await queryRows<{ status: string; error: string | null; sent_at: number }>(d.database, 'select status, error, sent_at from notify_sends where to_email = ?', ['slow@example.com']);
    assert.deepEqual([row.status, row.error], ['sent', null]);
    const [enrollment] = await queryRows<{ status: string; attempts: number }>(
      d.database,
      'select e.status, e.attempts from notify_enrollments e join notify_contacts c on c.id = e.contact_id where c.email = ?',
      ['slow@example.com'],
    );
    assert.deepEqual([enrollment.status, Number(enrollment.attempts)], ['completed', 0]);
    assert.equal(d.sink.messages.filter((m) => m.envelope.to.includes('slow@example.com')).length, 1, 'delivered once');
    assert.equal(d.sink.attempts.get('slow@example.com'), 2);
  });

  test('campaigns:cancel settles a send deferred for ever: cancelled, neither sent nor failed, never tried again', async () => {
    d.sink.failFor('cy@example.com', Number.POSITIVE_INFINITY);
    d.writeFile('news.csv', CSV);
    await d.cli(['contacts:import', 'news.csv', '--list', 'news']);
    const id = (await d.cli(['campaigns:create', '--subject', 'Cancelled news', '--text', 'Hi', '--list', 'news'])).trim().split('\n')[0];
    const run = await d.cli(['notify:send-campaign', id]);
    assert.match(run, /sent 2, failed 0, suppressed 0, deferred 1/);
    await d.cli(['campaigns:cancel', id]);
    const rows = await queryRows<{ status: string }>(d.database, 'select status from notify_sends where campaign_id = ? and to_email = ?', [Number(id), 'cy@example.com']);
    assert.deepEqual(rows, [{ status: 'cancelled' }]);
    const stats = JSON.parse(await d.cli(['stats', id, '--json']));
    assert.deepEqual([stats.stats.total, stats.stats.sent, stats.stats.failed], [3, 2, 0]);
    const attempts = d.sink.attempts.get('cy@example.com');
    const again = await d.run(['notify:send-campaign', id]);
    assert.match(again.stdout, /cancelled/);
    assert.equal(d.sink.attempts.get('cy@example.com'), attempts, 'not tried after the cancel');
  });
});
