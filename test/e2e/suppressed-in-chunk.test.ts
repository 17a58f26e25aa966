// As deployed: a throttled campaign run by a separate `notify worker` holds its chunk's sends
// queued while it hands them to the mail server one at a time. While the first reader's message is
// at the SMTP server (held there), a later reader of the same chunk uses the one-click unsubscribe
// on `notify serve`: the worker does not send her the campaign; her row is `suppressed`, counted so
// by `notify stats`, and the campaign ends `sent`. Configured only by notify.config.json (strings).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';

const CSV = ['email,name', 'ann@example.com,Ann', 'bea@example.com,Bea', 'cal@example.com,Cal'].join('\n');

describeEachEngine('as deployed: a one-click unsubscribe while the send waits in a throttled run', (engine) => {
  let d: Deployment;
  let server: string;
  before(async () => {
    d = await Deployment.open(engine, { config: { throttleMs: '200' } });
    server = (await d.serve()).url;
  });
  after(() => d?.close());

  test('Bea unsubscribes while Ann is being delivered: the worker sends Ann and Cal only; Bea suppressed', async () => {
    d.writeFile('readers.csv', CSV);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const t0 = Date.now();
    const id = (await d.cli(['campaigns:create', '--subject', 'News', '--text', 'Hi {{ contact.name }}', '--list', 'readers'])).trim().split('\n')[0];
    const oneCall = Date.now() - t0;
    const ann = d.sink.holdFor('ann@example.com');
    const worker = await d.worker(0.3);
    // far enough ahead for the CLI process to start and store it, on a loaded machine too
    await d.cli(['campaigns:schedule', id, new Date(Date.now() + Math.max(3_000, 3 * oneCall)).toISOString()]);
    await ann.reached;
    const [bea] = await queryRows<{ unsubscribe_token: string }>(d.database, 'select unsubscribe_token from notify_contacts where email = ?', ['bea@example.com']);
    const waiting = await queryRows<{ status: string }>(d.database, 'select s.status from notify_sends s where s.campaign_id = ? and s.to_email = ?', [Number(id), 'bea@example.com']);
    assert.deepEqual(waiting, [{ status: 'queued' }], 'her send waits in the claimed chunk');
    const res = await fetch(`${server}/notify/unsubscribe/${bea.unsubscribe_token}`, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 200);
    ann.release();

    await worker.waitForOutput(new RegExp(`campaign ${id}: .*campaign sent, nothing remains`), 60_000).catch((err) => assert.fail(`${err.message}\n${d.describe()}`));
    await worker.stop();
    assert.deepEqual(d.sink.messages.map((m) => m.envelope.to[0]).sort(), ['ann@example.com', 'cal@example.com']);
    const rows = await queryRows<{ to_email: string; status: string }>(d.database, 'select to_email, status from notify_sends where campaign_id = ? order by to_email', [Number(id)]);
    assert.deepEqual(
      rows.map((r) => [r.to_email, r.status]),
      [
        ['ann@example.com', 'sent'],
        ['bea@example.com', 'suppressed'],
        ['cal@example.com', 'sent'],
      ],
    );
    const report = JSON.parse(await d.cli(['stats', id, '--json']));
    assert.deepEqual([report.stats.total, report.stats.sent, report.stats.failed, report.suppressed, report.status], [3, 2, 0, 1, 'sent']);
  });
});
