// Campaigns that cannot start, as a deployed `notify worker` meets them: configured only by
// notify.config.json, the CLI in other processes, a real SMTP server as the mailer.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Deployment, describeEachEngine } from './harness.ts';

const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;

/** schedules `id` a little ahead: far enough for the CLI process to store it on a loaded machine */
async function scheduleSoon(d: Deployment, id: string): Promise<void> {
  const started = Date.now();
  await d.cli(['campaigns:list']);
  const sendAt = new Date(Date.now() + Math.max(5_000, 3 * (Date.now() - started)));
  assert.match(await d.cli(['campaigns:schedule', id, sendAt.toISOString()]), /scheduled for/);
}

describeEachEngine('as deployed: a campaign that cannot start', (engine) => {
  const deployments: Deployment[] = [];
  after(() => Promise.all(deployments.map((d) => d.close())));

  test('no from address: the worker pauses the due campaign once, with the reason campaigns:list shows, and does not retry it', async () => {
    const d = await Deployment.open(engine, { config: { fromEmail: '' } });
    deployments.push(d);
    d.writeFile('readers.csv', 'email\nann@example.com\nbob@example.com\n');
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const id = (await d.cli(['campaigns:create', '--subject', 'No sender', '--text', 'Hello', '--list', 'readers'])).trim().split('\n')[0];
    const worker = await d.worker(0.3);
    await scheduleSoon(d, id);
    await worker.waitForOutput(new RegExp(`campaign ${id} not started: no from address .*it is paused`), 60_000);
    const listed = await d.cli(['campaigns:list']);
    assert.match(listed, new RegExp(`^${id}\\tpaused \\(not started: no from address \\(set the fromEmail option .*NOTIFY_FROM_EMAIL`, 'm'));
    // a few more rounds: the paused campaign is not tried again
    const rounds = async () => count(worker.stdout, new RegExp(`campaign ${id}`));
    const before = await rounds();
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(await rounds(), before, worker.describe());
    assert.equal(d.sink.messages.length, 0);
  });

  test('testMode: a due scheduled campaign stays scheduled (a dry run) and the worker still sleeps its interval between rounds', async () => {
    const d = await Deployment.open(engine, { config: { testMode: 'true' } });
    deployments.push(d);
    await d.cli(['contacts:import', d.writeFile('readers.csv', 'email\nann@example.com\n').split('/').pop()!]);
    const id = (await d.cli(['campaigns:create', '--subject', 'Dry', '--text', 'Hello'])).trim().split('\n')[0];
    const worker = await d.worker(1);
    await scheduleSoon(d, id);
    const dryRun = new RegExp(`testMode: dry run of campaign ${id}`);
    await worker.waitForOutput(dryRun, 60_000);
    const first = count(worker.stdout, dryRun);
    await new Promise((r) => setTimeout(r, 3_000));
    // one round a second: about 3 more (a busy loop printed hundreds)
    const more = count(worker.stdout, dryRun) - first;
    assert.ok(more <= 5, `${more} dry runs in 3 s with --interval 1`);
    assert.match(await d.cli(['campaigns:list']), new RegExp(`^${id}\\tscheduled at`, 'm'));
  });
});
