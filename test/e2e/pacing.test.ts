// Sending-rate control as deployed: sendRate from .env, domainRates and rateLimitStore from
// notify.config.json (strings only), a CLI run and two `notify worker` processes sending one
// campaign together to a real SMTP server. The turns are shared through the database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SinkMessage } from '../helpers/smtp-sink.ts';
import { busiestWindow, rateOf } from '../helpers/windows.ts';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';

const GMAIL = 12;
const OTHERS = 28;
const CSV = [
  'email,name',
  ...Array.from({ length: GMAIL }, (_, i) => `reader${i}@Gmail.com,Gmail ${i}`),
  ...Array.from({ length: OTHERS }, (_, i) => `reader${i}@example.org,Other ${i}`),
].join('\n');

describeEachEngine('as deployed: sendRate and domainRates over a CLI run and two workers', (engine) => {
  let d: Deployment;
  const campaignMail = () => d.sink.messages.filter((m) => m.parsed.subject === 'Paced news');
  const at = (ms: SinkMessage[]) => ms.map((m) => m.at);

  before(async () => {
    d = await Deployment.open(engine, {
      config: { domainRates: '{"GMAIL.com": 2}', rateLimitStore: 'database', batchSize: '8' },
      envFile: '# the whole fleet together\nnotify.sendRate = 8\n',
    });
    d.writeFile('readers.csv', CSV);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
  });
  after(() => d?.close());

  test('a bad rate in .env stops the command with the option named', async () => {
    d.writeFile('bad.env', 'notify.sendRate = fast\n');
    const r = await d.run(['--env-file', 'bad.env', 'campaigns:list']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Option 'sendRate' from .*bad\.env:1 must be a number of messages per second \(got "fast"\)/);
  });

  test('every second at the SMTP server holds at most 8 messages and at most 2 to gmail.com; everyone gets one', async () => {
    const id = (await d.cli(['campaigns:create', '--subject', 'Paced news', '--text', 'Hello {{ contact.name }}', '--list', 'readers'])).trim().split('\n')[0];
    await Promise.all([d.worker(0.2), d.worker(0.2)]);
    // the CLI run sends the first batch, the workers take the campaign from there
    await d.cli(['notify:send-campaign', id]);
    await waitUntil(() => (campaignMail().length >= GMAIL + OTHERS ? true : undefined), 90_000, `every message (${d.describe()})`);
    const all = campaignMail();
    const gmail = all.filter((m) => m.envelope.to[0].endsWith('@gmail.com'));
    assert.equal(new Set(all.map((m) => m.envelope.to[0])).size, GMAIL + OTHERS, 'nobody twice');
    assert.equal(gmail.length, GMAIL, 'the domain is matched whatever its case');
    const t0 = Math.min(...at(all));
    const timeline = all.map((m) => `${Math.round(m.at - t0)} ${m.envelope.to[0]}`).join('\n');
    assert.ok(busiestWindow(at(all)) <= 8, `busiest second: ${busiestWindow(at(all))}\n${timeline}`);
    assert.ok(busiestWindow(at(gmail)) <= 2, `busiest second to gmail.com: ${busiestWindow(at(gmail))}`);
    // the whole run is paced, not merely its start: 40 messages at 8/s take about 5 s
    assert.ok(rateOf(at(all)) <= 8, `overall ${rateOf(at(all)).toFixed(2)}/s`);
    assert.ok(rateOf(at(gmail)) <= 2, `gmail.com ${rateOf(at(gmail)).toFixed(2)}/s`);
  });
});
