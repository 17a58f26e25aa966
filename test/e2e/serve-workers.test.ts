// `notify serve --workers 2` as deployed: the primary and its two node:cluster workers share one
// port; a reader's repeated opens land on both workers, and the first open is counted once.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';
import { delivered, pixelUrl, READER, trackedLinks } from './mail.ts';

/** GET on a connection of its own (no keep-alive), so the primary hands each request to the next worker. */
function getAlone(url: string, headers: Record<string, string> = READER): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describeEachEngine('notify serve --workers 2, as deployed', (engine) => {
  let d: Deployment;
  before(async () => {
    d = await Deployment.open(engine);
  });
  after(() => d.close());

  test('opens answered by both workers: every one stored, the first counted once, SIGTERM exits 0', async () => {
    d.writeFile('readers.csv', 'email,name\nann@example.com,Ann\n');
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const id = (await d.cli(['campaigns:create', '--subject', 'Workers', '--html', '<p>Hello</p>', '--list', 'readers'])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), /sent 1, failed 0/);
    const [mail] = await delivered(d.sink, (m) => m.parsed.subject === 'Workers', 1);

    const serve = d.spawn(['serve', '--workers', '2', '--port', String(d.port), '--host', '127.0.0.1'], { name: 'serve --workers 2' });
    const [, url] = await serve.waitForOutput(/listening on (http:\/\/\S+) \(routes under \/notify\/\), 2 worker processes/, 60_000);
    assert.equal(url, d.baseUrl);
    const pixel = pixelUrl(mail);
    // all at once: both workers buffer opens of the same send and flush them around the same time
    const answers = await Promise.all(Array.from({ length: 40 }, () => getAlone(pixel)));
    assert.deepEqual(
      answers.filter((a) => a.status !== 200 || a.bytes !== 43),
      [],
      'every open answered with the GIF',
    );

    assert.equal(await serve.stop(60_000), 0, serve.describe());
    const served = [...serve.stdout.matchAll(/notify\[worker \d+\]: stopped after (\d+) requests/g)].map((m) => Number(m[1]));
    assert.equal(served.length, 2, `both workers stopped cleanly\n${serve.describe()}`);
    assert.ok(
      served.every((n) => n > 0),
      `each worker answered some opens: ${served.join(', ')}`,
    );
    assert.equal(
      served.reduce((a, b) => a + b, 0),
      40,
    );

    const [{ n }] = await queryRows<{ n: number }>(d.database, "select count(*) as n from notify_events where campaign_id = ? and type = 'open'", [Number(id)]);
    assert.equal(Number(n), 40, 'every answered open is a stored event');
    const [send] = await queryRows<{ opened_at: number | null }>(d.database, 'select opened_at from notify_sends where campaign_id = ?', [Number(id)]);
    assert.notEqual(send.opened_at, null);
    const report = JSON.parse(await d.cli(['stats', id, '--json']));
    assert.equal(report.stats.opened, 1, 'one reader, one first open, whichever worker wrote it');
  });

  test('a link scanner whose clicks both workers answered: every click of its burst labelled, no human click counted', async () => {
    d.writeFile('scanned.csv', 'email,name\nbob@example.com,Bob\n');
    await d.cli(['contacts:import', 'scanned.csv', '--list', 'scanned']);
    const html = '<p><a href="https://example.com/a">a</a> <a href="https://example.com/b">b</a> <a href="https://example.com/c">c</a></p>';
    const id = (await d.cli(['campaigns:create', '--subject', 'Scanned', '--html', html, '--list', 'scanned'])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), /sent 1, failed 0/);
    const [mail] = await delivered(d.sink, (m) => m.parsed.subject === 'Scanned', 1);
    const links = trackedLinks(mail);
    assert.equal(links.length, 3);

    const serve = d.spawn(['serve', '--workers', '2', '--port', String(d.port), '--host', '127.0.0.1'], { name: 'serve --workers 2' });
    await serve.waitForOutput(/listening on (http:\/\/\S+) \(routes under \/notify\/\), 2 worker processes/, 60_000);
    // past the 5 s after delivery in which any click is a scanner's (so only the burst can say so)
    await new Promise((r) => setTimeout(r, 5_500));
    // one connection per click, 400 ms apart: each lands in its own flush, the workers in turn
    for (const link of links) {
      assert.equal((await getAlone(link.href)).status, 302);
      await new Promise((r) => setTimeout(r, 400));
    }
    assert.equal(await serve.stop(60_000), 0, serve.describe());

    const clicks = await queryRows<{ link_index: number; machine_reason: string | null }>(
      d.database,
      "select link_index, machine_reason from notify_events where campaign_id = ? and type = 'click' order by link_index",
      [Number(id)],
    );
    assert.deepEqual(
      clicks.map((c) => [Number(c.link_index), c.machine_reason]),
      [
        [0, 'link_burst'],
        [1, 'link_burst'],
        [2, 'link_burst'],
      ],
    );
    const [send] = await queryRows<{ clicked_at: number | null; human_clicked_at: number | null }>(d.database, 'select clicked_at, human_clicked_at from notify_sends where campaign_id = ?', [Number(id)]);
    assert.notEqual(send.clicked_at, null);
    assert.equal(send.human_clicked_at, null, 'the human click counted by the first flush was given back');
    const report = JSON.parse(await d.cli(['stats', id, '--json']));
    assert.equal(report.stats.clicked, 1);
  });
});
