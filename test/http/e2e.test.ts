import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const HOST = 'https://t.example.com';
const BROWSER = { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' };

/** The controller answers for the tracking host: strip it and call in-process. */
const hit = (notify: Notify, url: string, init?: RequestInit) => notify.fetch(new Request(url.replace(HOST, 'http://localhost:3000'), { redirect: 'manual', ...init }));

forEachEngine('delivered email, then its links used', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const clock = manualClock();
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify({ ...testOptions(h.url, { mailer: sink.url, trackingHost: HOST }), clock });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('pixel, click and the List-Unsubscribe one-click POST of a real campaign email, reflected in the stats', async () => {
    await notify.contacts.upsert({ email: 'reader@example.com', lists: ['e2e'] });
    const campaign = await notify.campaigns.create({
      subject: 'Spring',
      html: '<p>Hi <a href="https://shop.example/spring?utm=1&amp;x=2">shop</a> <a href="https://blog.example/">blog</a></p>',
      list: 'e2e',
    });
    await notify.campaigns.send(campaign.id);
    await sink.waitFor(1);
    const { parsed, raw } = sink.messages[0];
    const html = String(parsed.html);
    const pixel = /<img src="([^"]+\/notify\/open\/[^"]+)"/.exec(html)![1];
    const clicks = [...html.matchAll(/href="([^"]+\/notify\/click\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    const unsubscribe = /^List-Unsubscribe:\s+<([^>]+)>\r?$/im.exec(raw.toString('latin1'))![1];
    assert.match(raw.toString('latin1'), /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/im);
    assert.equal(clicks.length, 2);

    clock.advance(60_000);
    const gif = await hit(notify, pixel, { headers: BROWSER });
    assert.equal(gif.headers.get('content-type'), 'image/gif');
    const first = await hit(notify, clicks[0], { headers: BROWSER });
    assert.equal(first.status, 302);
    assert.equal(first.headers.get('location'), 'https://shop.example/spring?utm=1&x=2');
    const second = await hit(notify, clicks[1], { headers: BROWSER });
    assert.equal(second.headers.get('location'), 'https://blog.example/');
    await notify.flush();
    assert.deepEqual(await notify.campaigns.getCampaignStats(campaign.id), { total: 1, sent: 1, failed: 0, opened: 1, clicked: 1 });

    const oneClick = await hit(notify, unsubscribe, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(oneClick.status, 200);
    assert.equal((await notify.contacts.get('reader@example.com'))?.status, 'unsubscribed');
    assert.equal((await notify.context.store.counters.get(campaign.id)).unsubscribed, 1, 'attributed to the campaign through the send the one-click URL names');
  });
});
