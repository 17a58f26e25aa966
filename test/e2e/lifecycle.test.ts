// The campaign lifecycle as deployed: a `notify worker` process starts a campaign scheduled by the
// CLI at its time, `notify campaigns:pause` from another process stops it, resume finishes it, and
// nobody gets it twice. Configured only by notify.config.json, a real SMTP server as the mailer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SinkMessage } from '../helpers/smtp-sink.ts';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine, type NotifyProcess, waitUntil } from './harness.ts';

const READERS = 40;
const CSV = ['email,name', ...Array.from({ length: READERS }, (_, i) => `reader${i}@example.com,Reader ${i}`)].join('\n');
/** the sink's arrival time as a wall-clock time */
const arrivedAt = (m: SinkMessage) => performance.timeOrigin + m.at;

describeEachEngine('as deployed: schedule, pause and resume a campaign through the CLI and a worker', (engine) => {
  let d: Deployment;
  let worker: NotifyProcess;
  let id = '';
  const campaignMail = () => d.sink.messages.filter((m) => m.parsed.subject === 'Lifecycle news' && m.envelope.to[0].startsWith('reader'));

  before(async () => {
    d = await Deployment.open(engine);
    d.writeFile('readers.csv', CSV);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const started = Date.now();
    id = (await d.cli(['campaigns:create', '--subject', 'Lifecycle news', '--text', 'Hello {{ contact.name }}', '--list', 'readers'])).trim().split('\n')[0];
    // A throttled run leaves time to pause it mid-way: after the third message the campaigns:pause
    // process must start and land before the last one. How long that takes follows the machine's
    // load, so the sends after the third take ten times what a CLI call just took: 250 to 500 ms
    // between two sends, 10 to 20 s for the whole run.
    const oneCall = Date.now() - started;
    const throttleMs = Math.min(500, Math.max(250, Math.ceil((10 * oneCall) / (READERS - 3))));
    d.writeConfig('notify.config.json', { ...d.defaults(), throttleMs: String(throttleMs), batchSize: '1000' });
    worker = await d.worker(0.3);
  });
  after(() => d?.close());

  test('bad inputs: a past or unparseable time, an unknown id, resuming a draft; each exits 1 with the reason', async () => {
    const past = await d.run(['campaigns:schedule', id, '2020-01-01T00:00:00Z']);
    assert.equal(past.code, 1);
    assert.match(past.stderr, /sendAt 2020-01-01T00:00:00.000Z is in the past.*\[INVALID_INPUT\]/);
    const junk = await d.run(['campaigns:schedule', id, 'tomorrow']);
    assert.match(junk.stderr, /sendAt must be a Date or an ISO 8601 time.*\[INVALID_INPUT\]/);
    const unknown = await d.run(['campaigns:pause', '9999']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Campaign 9999 not found \[NOT_FOUND\]/);
    const draft = await d.run(['campaigns:resume', id]);
    assert.match(draft.stderr, /Cannot resume campaign \d+: it is draft .*\[INVALID_STATE\]/);
    assert.equal(campaignMail().length, 0);
  });

  test('campaigns:test delivers a rendered copy and counts nothing', async () => {
    assert.match(await d.cli(['campaigns:test', id, '--to', 'editor@example.com']), /sent a test copy to editor@example.com/);
    await waitUntil(() => d.sink.messages.find((m) => m.envelope.to[0] === 'editor@example.com'), 10_000, 'the test copy');
    const rows = await queryRows<{ n: number }>(d.database, 'select count(*) as n from notify_sends where campaign_id = ?', [Number(id)]);
    assert.equal(Number(rows[0].n), 0);
  });

  test('the worker starts the scheduled campaign at its time, not before; pause stops it, resume finishes it once each', async () => {
    // an hour ahead first: the early run happens before it however slow the machine, and the
    // worker's rounds meanwhile start nothing
    const later = new Date(Date.now() + 3_600_000);
    const started = Date.now();
    assert.match(await d.cli(['campaigns:schedule', id, later.toISOString()]), /scheduled for/);
    const oneCall = Date.now() - started;
    const early = await d.cli(['notify:send-campaign', id]);
    assert.match(early, /is scheduled for .*; nothing is sent before then/);
    assert.equal(campaignMail().length, 0);
    // then moved to a near time, far enough ahead for the CLI process to start and store it (three
    // times what the same call just took, at least 5 s, so the margin follows the machine's load):
    // the worker starts it then, not before (a worker ignoring the time would have sent it already)
    const sendAt = new Date(Date.now() + Math.max(5_000, 3 * oneCall));
    assert.match(await d.cli(['campaigns:schedule', id, sendAt.toISOString()]), /scheduled for/);

    await waitUntil(() => (campaignMail().length >= 3 ? true : undefined), sendAt.getTime() - Date.now() + 60_000, `the first messages (${d.describe()})`);
    const first = Math.min(...campaignMail().map(arrivedAt));
    assert.ok(first >= sendAt.getTime(), `first message ${new Date(first).toISOString()} not before ${sendAt.toISOString()}`);
    await worker.waitForOutput(new RegExp(`campaign ${id}: scheduled time reached, starting`));

    assert.match(await d.cli(['campaigns:pause', id]), new RegExp(`campaign ${id} paused`));
    const atPause = campaignMail().length;
    assert.ok(atPause < READERS, `paused mid-way (${atPause} of ${READERS})`);
    const idle = await d.cli(['notify:send-campaign', id]);
    assert.match(idle, /is paused; resume it to continue/);
    assert.match(await d.cli(['campaigns:list', '--status', 'paused']), new RegExp(`^${id}\\tpaused`, 'm'));
    // Several throttle intervals and worker rounds pass (the CLI calls above took longer still): nothing more arrived.
    await waitUntil(() => (campaignMail().length > atPause ? true : undefined), 1_500, '').catch(() => undefined);
    assert.equal(campaignMail().length, atPause, 'no message after pause returned');

    assert.match(await d.cli(['campaigns:resume', id]), /resumed/);
    await worker.waitForOutput(new RegExp(`campaign ${id}: .*nothing remains`), 60_000);
    const to = campaignMail().map((m) => m.envelope.to[0]);
    assert.equal(to.length, READERS);
    assert.equal(new Set(to).size, READERS, 'nobody got it twice');
    assert.match(await d.cli(['campaigns:list', '--status', 'sent']), new RegExp(`^${id}\\tsent`, 'm'));
    const cancel = await d.run(['campaigns:cancel', id]);
    assert.match(cancel.stderr, /it is sent .*\[INVALID_STATE\]/);
  });
});
