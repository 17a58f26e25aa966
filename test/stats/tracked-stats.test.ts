import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { call, serve } from '../helpers/http.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const BROWSER = { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' };

/**
 * getCampaignStats as a user reaches it: a campaign sent, its recipient's client loading the pixel
 * and following links through the endpoints, the figures read through the public API of the same
 * process, with no flush called by the test.
 */
forEachEngine('getCampaignStats after opens and clicks through the endpoints', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const clock = manualClock();
  before(async () => {
    sink = await startSmtpSink();
    // a commit interval no step of the test waits for: the read itself must write what is buffered
    notify = await createNotify({ ...testOptions(h.url, { mailer: sink.url, tracking: { intervalMs: 60_000 } }), clock });
  });
  after(async () => {
    await notify?.close();
    await sink?.close();
  });

  test('three opens and four clicks of one send, none of the other: opened 1, clicked 1', async () => {
    for (const email of ['ann@example.com', 'bob@example.com']) await notify.contacts.upsert({ email, lists: ['news'] });
    const c = await notify.campaigns.create({ subject: 'News', html: '<p><a href="https://example.com/a">A</a> <a href="https://example.com/b">B</a></p>', list: 'news' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 2);
    await sink.waitFor(2);
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 2, sent: 2, failed: 0, opened: 0, clicked: 0 });

    const ann = String(sink.messages.find((m) => m.envelope.to.includes('ann@example.com'))!.parsed.html);
    const path = (href: string) => new URL(href.replace(/&amp;/g, '&')).pathname + new URL(href.replace(/&amp;/g, '&')).search;
    const pixel = path(/<img src="([^"]+)"/.exec(ann)![1]);
    const links = [...ann.matchAll(/href="([^"]+\/notify\/click\/[^"]+)"/g)].map((m) => path(m[1]));
    assert.equal(links.length, 2);

    clock.advance(minutes(10)); // read and clicked by a person, not by a scanner at delivery
    const srv = await serve(notify);
    try {
      for (let i = 0; i < 2; i++) assert.equal((await fetch(srv.url + pixel, { headers: BROWSER })).status, 200);
      assert.equal((await call(notify, pixel, { headers: BROWSER })).status, 200);
      for (const [i, link] of [links[0], links[1], links[0], links[1]].entries()) {
        const res = i % 2 === 0 ? await fetch(srv.url + link, { headers: BROWSER, redirect: 'manual' }) : await call(notify, link, { headers: BROWSER, redirect: 'manual' });
        assert.equal(res.status, 302);
      }
    } finally {
      await srv.close();
    }
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 2, sent: 2, failed: 0, opened: 1, clicked: 1 });
    const report = await notify.campaigns.getCampaignReport(c.id);
    assert.deepEqual(report.human, { opened: 1, clicked: 1 });
    assert.deepEqual(
      report.links.map((l) => [l.index, l.url, l.clicks, l.unique]),
      [
        [0, 'https://example.com/a', 2, 1],
        [1, 'https://example.com/b', 2, 1],
      ],
    );
  });
});
