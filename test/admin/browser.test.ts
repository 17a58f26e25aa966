import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { createNotify, type Notify } from '../../src/notify.ts';
import { BROWSER_SKIP, CHROMIUM } from '../helpers/chromium.ts';
import { testOptions } from '../helpers/engines.ts';

/**
 * The admin pages in a real browser (Debian chromium through playwright-core): the dashboard, a
 * message from the outbox, a click on its link through the local server, the click counted.
 * Screenshots go to test-output/ for a human to look at.
 */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const OUT = resolve('test-output');
const TOKEN = 'browser-admin-token-0123456789';

describe('admin pages in a browser', { skip: BROWSER_SKIP }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-browser-'));
  let notify: Notify;
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer((req, res) => handler(req, res));
  let url = '';
  let context: BrowserContext;
  let page: Page;
  let campaignId = 0;

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The links in the messages point at baseUrl, so it must be this server's address.
    notify = await createNotify(testOptions(`sqlite:${join(dir, 'notify.db')}`, { mailer: `outbox:${join(dir, 'outbox')}`, baseUrl: url, adminToken: TOKEN }));
    handler = notify.listener;
    for (const name of ['Ann', 'Bob']) await notify.contacts.upsert({ email: `${name.toLowerCase()}@example.com`, name, lists: ['news'] });
    const campaign = await notify.campaigns.create({
      name: 'Browser test <b>campaign</b>',
      subject: 'Spring news',
      list: 'news',
      markdown: `Hi {{ contact.name }},\n\n[See your click counted](${url}/notify/admin) or [leave](https://example.com/away).`,
    });
    campaignId = campaign.id;
    while (!(await notify.campaigns.send(campaignId)).done);
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'notify-chromium-')), {
      executablePath: CHROMIUM,
      args: ARGS,
      // HTTP Basic sent up front: a browser that waits for a challenge is sent to the console's sign-in page instead
      extraHTTPHeaders: { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` },
      viewport: { width: 1280, height: 900 },
    });
    // Nothing leaves the machine: only this server answers.
    await context.route(/^https?:\/\/(?!127\.0\.0\.1:)/, (route) => route.abort());
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    await new Promise<void>((r) => server.close(() => r()));
    await notify?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('dashboard, outbox message, its link clicked through the click endpoint, the click counted', async () => {
    const dashboard = await page.goto(`${url}/notify/admin`);
    assert.equal(dashboard?.status(), 200);
    assert.equal(await page.locator('h1').first().textContent(), 'Campaigns');
    assert.match((await page.locator('table').first().textContent()) ?? '', /Browser test <b>campaign<\/b>/, 'shown as text, not markup');
    await page.screenshot({ path: join(OUT, 'admin-dashboard.png'), fullPage: true });

    await page.click('header nav >> text=Outbox');
    assert.match(await page.locator('main').innerText(), /2 messages/);
    await page.locator('a', { hasText: 'Spring news' }).first().click();
    await page.waitForURL(/\/notify\/admin\/outbox\/[^/]+\.eml$/);
    const mail = page.frameLocator('iframe.mail');
    await mail.locator('a', { hasText: 'See your click counted' }).waitFor();
    await page.screenshot({ path: join(OUT, 'admin-message.png'), fullPage: true });

    const href = await mail.locator('a', { hasText: 'See your click counted' }).getAttribute('href');
    assert.match(href ?? '', new RegExp(`^${url}/notify/click/[A-Za-z0-9_-]{22}\\?l=c${campaignId}\\.0\\.`), 'rewritten for click tracking');
    await mail.locator('a', { hasText: 'See your click counted' }).click();
    // The click endpoint redirects the whole tab to the link's destination: the admin dashboard.
    await page.waitForURL(`${url}/notify/admin`);

    const clicked = await poll(async () => {
      await page.goto(`${url}/notify/admin/campaigns/${campaignId}`);
      return Number(await page.locator('#stat-clicked').textContent());
    });
    assert.equal(clicked, 1, 'the click is counted');
    assert.ok(Number(await page.locator('#stat-opened').textContent()) >= 1, 'viewing the message loaded its pixel: an open');
    assert.match(await page.locator('main').innerText(), /See your click counted|notify\/admin/, 'the link appears in the per-link table');
    // drawn twice (wide, and at a phone's width); the wide one shows at this size
    const svg = page.locator('.chart-wide svg.chart');
    assert.equal(await page.locator('.chart-narrow svg.chart').isVisible(), false);
    assert.equal(await svg.count(), 1);
    await page.screenshot({ path: join(OUT, 'admin-campaign.png'), fullPage: true });

    const stats = await notify.campaigns.getCampaignStats(campaignId);
    assert.deepEqual({ total: stats.total, sent: stats.sent, clicked: stats.clicked }, { total: 2, sent: 2, clicked: 1 });
  });

  test("another message's unsubscribe link works from the outbox and the campaign counts it", async () => {
    await page.goto(`${url}/notify/admin/outbox`);
    await page.locator('tr', { hasText: 'bob@example.com' }).locator('a').click();
    const mail = page.frameLocator('iframe.mail');
    await mail.locator('a', { hasText: 'Unsubscribe' }).click();
    await page.waitForURL(/\/notify\/unsubscribe\//);
    assert.match(await page.locator('body').innerText(), /unsubscribed/i);
    assert.equal((await notify.contacts.get('bob@example.com'))?.status, 'unsubscribed');
    await page.goto(`${url}/notify/admin`);
    const row = page.locator('tr', { hasText: 'Browser test' });
    assert.equal(await row.locator('td').nth(13).textContent(), '1', 'Unsubscribed column');
  });
});

async function poll(read: () => Promise<number>, want = 1, tries = 40): Promise<number> {
  let value = await read();
  for (let i = 0; i < tries && value < want; i++) {
    await new Promise((r) => setTimeout(r, 150));
    value = await read();
  }
  return value;
}
