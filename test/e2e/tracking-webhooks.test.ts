// Opens and clicks as outgoing webhooks, as deployed: a campaign sent to a real SMTP server, its
// readers opening and clicking through a `notify serve` process, and a separate `notify worker`
// process delivering each stored open and click, signed, to a receiver on a socket.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { events } from '../../src/index.ts';
import { startReceiver } from '../triggers/receiver.ts';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';
import { delivered, pixelUrl, READER, trackedLinks } from './mail.ts';

const SECRET = 'whsec_e2e_tracking';

describeEachEngine('as deployed: opens and clicks through notify serve reach the receiver from notify worker', (engine) => {
  let d: Deployment;
  let server: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    const hooks = JSON.stringify([{ url: receiver.url, secret: SECRET, events: ['notify:email.opened', 'notify:email.clicked'] }]);
    d = await Deployment.open(engine, { envFile: `NOTIFY_WEBHOOKS_OUT='${hooks}'\n` });
    server = (await d.serve()).url;
  });
  after(async () => {
    await d?.close();
    await receiver?.close();
  });

  test('3 readers open twice and click once; every stored open and click arrives once, signed, its id from its event row', async () => {
    d.writeFile('readers.csv', ['email', 'a@example.com', 'b@example.com', 'c@example.com'].join('\n'));
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const id = (await d.cli(['campaigns:create', '--subject', 'Tracked news', '--html', '<p>Hi <a href="https://example.com/story">story</a></p>', '--list', 'readers'])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), /sent 3, failed 0/);
    const mails = await delivered(d.sink, (m) => m.parsed.subject === 'Tracked news', 3);
    for (const mail of mails) {
      for (let i = 0; i < 2; i++) assert.equal((await fetch(pixelUrl(mail).replace(/^https?:\/\/[^/]+/, server), { headers: READER })).status, 200);
      const [link] = trackedLinks(mail);
      assert.equal((await fetch(link.href.replace(/^https?:\/\/[^/]+/, server), { headers: READER, redirect: 'manual' })).status, 302);
    }
    const stored = await waitUntil(
      async () => {
        const rows = await queryRows<{ id: number; type: string }>(d.database, `select id, type from notify_events where type in ('open', 'click') order by id`);
        return rows.length === 9 ? rows : undefined;
      },
      20_000,
      'the tracking writer stores 6 opens and 3 clicks',
    );
    const waiting = await queryRows<{ status: string }>(d.database, 'select status from notify_outbound_events');
    assert.ok(waiting.length >= 1 && waiting.length <= 9 && waiting.every((r) => r.status === 'batch'), `one row per flushed batch, none per open: ${JSON.stringify(waiting)}`);

    await d.worker(0.3);
    await waitUntil(() => (receiver.received.length >= 9 ? true : undefined), 30_000, 'nine events at the receiver').catch((err) =>
      assert.fail(`${err.message}: got ${receiver.received.length}\n${d.describe()}`),
    );
    for (const e of receiver.received) assert.ok(events.verify(e.body, e.signature, SECRET), `signed: ${e.id}`);
    const want = stored.map((e) => `${e.type === 'open' ? 'notify:email.opened' : 'notify:email.clicked'} evt_e${e.id}`).sort();
    assert.deepEqual(receiver.received.map((e) => `${e.type} ${e.id}`).sort(), want, 'the set delivered is the set stored, each once');
    // recorded a moment after the receiver's answers
    await waitUntil(
      async () => {
        const rows = await queryRows<{ status: string }>(d.database, 'select status from notify_outbound_events');
        return rows.length === 9 && rows.every((r) => r.status === 'delivered') ? true : undefined;
      },
      15_000,
      'nine deliveries recorded, no batch row left',
    );
  });
});
