import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { Deployment, type NotifyProcess, waitUntil } from '../e2e/harness.ts';
import { BROWSER_SKIP, CHROMIUM } from '../helpers/chromium.ts';

/**
 * The campaign page's lifecycle forms in a real browser against `notify serve`, with a separate
 * `notify worker` process doing the sending: schedule, see the worker start at that time, pause,
 * see it stop, resume, see it finish with nobody reached twice. Screenshots go to test-output/.
 */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const OUT = resolve('test-output');
const TOKEN = 'browser-lifecycle-token-0123456789';
const READERS = 30;

describe('admin lifecycle forms in a browser, obeyed by a worker process', { skip: BROWSER_SKIP }, () => {
  let d: Deployment;
  let url = '';
  let worker: NotifyProcess;
  let context: BrowserContext;
  let page: Page;
  let id = '';
  const campaignMail = () => d.sink.messages.filter((m) => m.parsed.subject === 'Browser lifecycle' && m.envelope.to[0].startsWith('reader'));

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    d = await Deployment.open('sqlite', { config: { adminToken: TOKEN } });
    d.writeFile('readers.csv', ['email', ...Array.from({ length: READERS }, (_, i) => `reader${i}@example.com`)].join('\n'));
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const started = Date.now();
    id = (await d.cli(['campaigns:create', '--name', 'Browser lifecycle', '--subject', 'Browser lifecycle', '--markdown', 'Hello from the [shop](https://shop.example/).', '--list', 'readers'])).trim().split('\n')[0];
    // A throttled run leaves time to pause it mid-way from the page after the third message. That
    // time follows the machine's load, so the sends after the third take ten times what a CLI call
    // just took: 200 to 400 ms between two sends, 6 to 12 s for the whole campaign.
    const oneCall = Date.now() - started;
    const throttleMs = Math.min(400, Math.max(200, Math.ceil((10 * oneCall) / (READERS - 3))));
    d.writeConfig('notify.config.json', { ...d.defaults(), adminToken: TOKEN, throttleMs: String(throttleMs), batchSize: '1000' });
    url = (await d.serve()).url;
    worker = await d.worker(0.3);
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'notify-chromium-')), {
      executablePath: CHROMIUM,
      args: ARGS,
      // HTTP Basic sent up front: a browser that waits for a challenge is sent to the console's sign-in page instead
      extraHTTPHeaders: { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` },
      viewport: { width: 1280, height: 900 },
    });
    await context.route(/^https?:\/\/(?!127\.0\.0\.1:)/, (route) => route.abort());
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    await d?.close();
  });

  test('schedule, pause and resume from the page; the worker starts at the time, stops on pause, finishes on resume', async () => {
    await page.goto(`${url}/notify/admin/campaigns/${id}`);
    assert.equal(await page.locator('#status').textContent(), 'draft');

    await page.fill('#test-form input[name="to"]', 'editor@example.com');
    const posted = Date.now();
    await page.click('#test-form button');
    await page.waitForURL(/done=test-1/).catch(async (err) => {
      throw new Error(`${err.message}\n${page.url()}\n${await page.locator('body').innerText()}`);
    });
    const onePost = Date.now() - posted;
    assert.match((await page.locator('#notice').textContent()) ?? '', /1 test copy sent/);
    await waitUntil(() => d.sink.messages.find((m) => m.envelope.to[0] === 'editor@example.com'), 10_000, 'the test copy');

    // far enough ahead for the form post to be stored before then: ten times what the test copy's
    // post just took, at least 3 s, so the margin follows the machine's load
    const sendAt = new Date(Date.now() + Math.max(3_000, 10 * onePost));
    await page.fill('#schedule-form input[name="sendAt"]', sendAt.toISOString());
    await page.click('#schedule-form button');
    await page.waitForURL(/done=schedule/);
    assert.equal(await page.locator('#status').textContent(), 'scheduled');
    await page.screenshot({ path: join(OUT, 'admin-campaign-scheduled.png'), fullPage: true });

    await waitUntil(() => (campaignMail().length >= 3 ? true : undefined), sendAt.getTime() - Date.now() + 30_000, `the worker's first messages\n${d.describe()}`);
    const first = Math.min(...campaignMail().map((m) => performance.timeOrigin + m.at));
    assert.ok(first >= sendAt.getTime(), 'not before its time');

    await page.reload();
    assert.equal(await page.locator('#status').textContent(), 'sending');
    await page.click('#pause');
    await page.waitForURL(/done=pause/);
    const atPause = campaignMail().length;
    assert.equal(await page.locator('#status').textContent(), 'paused');
    assert.ok(atPause < READERS, `paused mid-way (${atPause} of ${READERS})`);
    await page.screenshot({ path: join(OUT, 'admin-campaign-paused.png'), fullPage: true });
    // five to ten throttle intervals and several worker rounds: nothing more arrives
    await waitUntil(() => (campaignMail().length > atPause ? true : undefined), 2_000, '').catch(() => undefined);
    assert.equal(campaignMail().length, atPause, 'the worker obeyed the pause');

    await page.click('#resume');
    await page.waitForURL(/done=resume/);
    await waitUntil(() => (campaignMail().length >= READERS ? true : undefined), 60_000, `the rest after resume\n${d.describe()}`);
    await worker.waitForOutput(new RegExp(`campaign ${id}: .*nothing remains`), 30_000);
    const to = campaignMail().map((m) => m.envelope.to[0]);
    assert.equal(new Set(to).size, READERS);
    assert.equal(to.length, READERS, 'nobody twice');
    await page.goto(`${url}/notify/admin/campaigns/${id}`);
    assert.equal(await page.locator('#status').textContent(), 'sent');
    assert.equal(await page.locator('#stat-sent').textContent(), String(READERS));
    await page.screenshot({ path: join(OUT, 'admin-campaign-sent.png'), fullPage: true });
  });

  test('a cross-site form post with the browser credentials is refused', async () => {
    const c = (await d.cli(['campaigns:create', '--subject', 'Target', '--text', 'x', '--list', 'readers'])).trim().split('\n')[0];
    // a page of another origin (served by the browser itself) submitting a form to the admin
    await page.route('http://127.0.0.1:1/evil', (route) =>
      route.fulfill({ contentType: 'text/html', body: `<form method="post" action="${url}/notify/admin/campaigns/${c}/cancel"><button id="go">win a prize</button></form>` }),
    );
    await page.goto('http://127.0.0.1:1/evil');
    await page.click('#go');
    await page.waitForLoadState();
    assert.match(await page.locator('body').innerText(), /out of date or came from another site/);
    await page.goto(`${url}/notify/admin/campaigns/${c}`);
    assert.equal(await page.locator('#status').textContent(), 'draft', 'not cancelled');
  });
});
