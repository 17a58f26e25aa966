import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { BROWSER_SKIP, CHROMIUM } from '../helpers/chromium.ts';
import { Deployment, waitUntil } from './harness.ts';

/**
 * The marketer's console in Debian's chromium, against `notify serve` and a separate `notify worker`
 * configured by files only, with the outbox mailer: sign in, compose with the live preview and
 * audience count, send a test, schedule, let the worker send, open a message from the outbox (its
 * pixel loads in the browser), click its link, and see the open and the click on the campaign's
 * chart. axe-core checks every page visited; the pages are checked again at a phone's width.
 * Screenshots go to test-output/.
 */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run'];
const OUT = resolve('test-output');
const TOKEN = 'console-browser-token-0123456789';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's source injected into the page; serious and critical violations fail the test */
async function accessible(page: Page, label: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  // the preview and message frames are sandboxed without scripts: axe checks the console's own page
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run(document, { iframes: false, resultTypes: ['violations'] })).violations;
  })) as AxeViolation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `${label}: accessibility`,
  );
}

async function noSidewaysScroll(page: Page, label: string): Promise<void> {
  const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.ok(scroll <= client, `${label}: the page is ${scroll}px wide in a ${client}px window`);
}

describe('the console in a browser, with serve and worker processes', { skip: BROWSER_SKIP }, () => {
  let d: Deployment;
  let url = '';
  let context: BrowserContext;
  let page: Page;
  let campaignPath = '';
  const visited = new Set<string>();
  const outbox = () => readdirSync(join(d.dir, 'outbox')).filter((n) => n.endsWith('.eml'));
  const go = async (path: string) => {
    await page.goto(`${url}${path}`);
    visited.add(path);
    await accessible(page, path);
  };

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    d = await Deployment.open('sqlite', { config: { adminToken: TOKEN, mailer: 'outbox:./outbox' } });
    d.writeFile('readers.csv', 'email,name\nann@example.com,Ann\nbob@example.com,Bob\ncyd@example.com,Cyd <i>the third</i>\n');
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    url = (await d.serve()).url;
    await d.worker(0.5);
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'notify-chromium-')), {
      executablePath: CHROMIUM,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
    });
    // nothing leaves the machine: other hosts are refused, and the shop the email links to is played here
    await context.route(/^https?:\/\/(?!127\.0\.0\.1:)/, (route) => route.abort());
    await context.route('https://shop.example/**', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><html lang="en"><title>Shop</title><h1>The spring sale</h1></html>' }));
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    await d?.close();
  });

  test('sign in: a page asks for the token, a wrong one is refused, the right one opens the console', async () => {
    await page.goto(`${url}/notify/admin`);
    assert.match(page.url(), /\/notify\/admin\/sign-in\?next=%2Fnotify%2Fadmin$/);
    await accessible(page, 'sign-in');
    await page.fill('#token', 'not-the-token');
    await page.click('#sign-in-form button');
    assert.equal(await page.locator('#sign-in-error').textContent(), 'That is not the admin token.');
    await page.fill('#token', TOKEN);
    await page.click('#sign-in-form button');
    await page.waitForURL(`${url}/notify/admin`);
    assert.equal(await page.locator('h1').textContent(), 'Campaigns');
    const cookie = (await context.cookies(`${url}/notify/admin`)).find((c) => c.name === 'notify_admin_auth');
    assert.deepEqual([cookie?.httpOnly, cookie?.sameSite, cookie?.path], [true, 'Strict', '/notify/admin']);
    visited.add('/notify/admin');
    await accessible(page, 'dashboard');
  });

  test('compose: live audience count and preview for a chosen contact, then saved as a draft', async () => {
    await page.click('nav >> text=New campaign');
    await page.waitForURL(/\/campaigns\/new$/);
    visited.add('/notify/admin/campaigns/new');
    await page.fill('#c-name', 'Spring <b>sale</b>');
    await page.fill('#c-subject', 'Spring sale for {{ contact.name }}');
    await page.fill('#c-body', 'Hello {{ contact.name }}!\n\nOur [spring sale](https://shop.example/spring) starts today.');
    await page.selectOption('#c-list', 'readers');
    await waitUntil(async () => ((await page.locator('#audience-count').textContent())?.includes('3 contacts') ? true : undefined), 10_000, 'the audience count');
    await page.fill('#c-contact', 'cyd@example.com');
    const frame = page.frameLocator('iframe[name="preview"]');
    await waitUntil(async () => ((await frame.locator('body').textContent().catch(() => ''))?.includes('Hello Cyd <i>the third</i>!') ? true : undefined), 15_000, 'the preview');
    assert.equal(await frame.locator('a', { hasText: 'spring sale' }).getAttribute('href'), 'https://shop.example/spring', 'no tracking in the preview');
    assert.equal(await frame.locator('i').count(), 0, 'the contact name is text, not markup');
    await accessible(page, 'compose');
    await page.screenshot({ path: join(OUT, 'console-compose.png'), fullPage: true });
    await page.click('#save');
    await page.waitForURL(/\/notify\/admin\/campaigns\/\d+\?done=created$/);
    campaignPath = new URL(page.url()).pathname;
    visited.add(campaignPath);
    assert.equal(await page.locator('h1').textContent(), 'Spring <b>sale</b>');
    assert.equal(await page.locator('#status').textContent(), 'draft');
    await accessible(page, 'campaign (draft)');
  });

  test('a test copy reaches the outbox; scheduled, the worker sends it at its time', async () => {
    await page.fill('#test-form input[name="to"]', 'editor@example.com');
    await page.click('#test-form button');
    await page.waitForURL(/done=test-1/);
    await waitUntil(() => (outbox().length === 1 ? true : undefined), 10_000, 'the test copy');
    const sendAt = new Date(Date.now() + 4_000);
    await page.fill('#schedule-form input[name="sendAt"]', sendAt.toISOString());
    await page.click('#schedule-form button');
    await page.waitForURL(/done=schedule/);
    assert.equal(await page.locator('#status').textContent(), 'scheduled');
    await accessible(page, 'campaign (scheduled)');
    await waitUntil(() => (outbox().length === 4 ? true : undefined), 40_000, `the campaign's three messages\n${d.describe()}`);
    await waitUntil(
      async () => {
        await page.goto(`${url}${campaignPath}`);
        return (await page.locator('#status').textContent()) === 'sent' ? true : undefined;
      },
      20_000,
      'the campaign marked sent',
    );
    assert.equal(await page.locator('#stat-sent').textContent(), '3');
  });

  test("a message from the outbox is opened in the browser (its pixel loads) and its link clicked: the chart shows both", async () => {
    await go('/notify/admin/outbox');
    const row = page.locator('tr', { hasText: 'ann@example.com' });
    await row.locator('a').click();
    await page.waitForURL(/\/notify\/admin\/outbox\/[^/]+\.eml$/);
    visited.add(new URL(page.url()).pathname);
    await accessible(page, 'message');
    const name = new URL(page.url()).pathname.split('/').pop()!;
    const parsed = await simpleParser(readFileSync(join(d.dir, 'outbox', decodeURIComponent(name))));
    assert.equal(parsed.subject, 'Spring sale for Ann');
    const pixel = /<img src="(http:\/\/127\.0\.0\.1:\d+\/notify\/open\/[A-Za-z0-9_-]+)"/.exec(String(parsed.html))?.[1];
    assert.ok(pixel, 'the message has its pixel');
    // the message frame shows the message as a mail client would: its images, the pixel too, load
    const mail = page.frameLocator('iframe.mail');
    await waitUntil(async () => ((await mail.locator(`img[src="${pixel}"]`).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth === 1).catch(() => false)) ? true : undefined), 10_000, 'the pixel loaded');
    await mail.locator('a', { hasText: 'spring sale' }).click();
    await page.waitForURL('https://shop.example/spring');
    assert.equal(await page.locator('h1').textContent(), 'The spring sale');

    await waitUntil(
      async () => {
        await page.goto(`${url}${campaignPath}?bucket=1m`);
        const [opened, clicked] = [await page.locator('#stat-opened').textContent(), await page.locator('#stat-clicked').textContent()];
        return opened === '1' && clicked === '1' ? true : undefined;
      },
      15_000,
      'the open and the click counted',
    );
    // the chart's series reach 1: the y axis tops at 1 and the lines leave the baseline
    const chart = page.locator('.chart-wide svg');
    assert.doesNotMatch((await chart.innerHTML()) ?? '', /No opens or clicks yet/);
    const points = await chart.locator('polyline').evaluateAll((ls) => ls.map((l) => l.getAttribute('points') ?? ''));
    const ys = (p: string) => p.split(' ').map((xy) => Number(xy.split(',')[1]));
    assert.ok(points.length >= 2 && points.slice(0, 1).every((p) => new Set(ys(p)).size > 1), `opens line rises: ${points[0]}`);
    assert.ok(new Set(ys(points[2])).size > 1, `clicks line rises: ${points[2]}`);
    await accessible(page, 'campaign (sent)');
    await page.screenshot({ path: join(OUT, 'console-campaign-chart.png'), fullPage: true });
  });

  test('a CSV imported from the page shows its progress to the end; the export link downloads the contacts; sequences and lists pages', async () => {
    await go('/notify/admin/import');
    await page.setInputFiles('#i-file', { name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from(`email,name\n${Array.from({ length: 200 }, (_, i) => `more${i}@example.com,More ${i}`).join('\n')}\n`) });
    await page.selectOption('#i-list', 'readers');
    await page.click('#import-form button');
    await page.waitForURL(/\/notify\/admin\/imports\/[A-Za-z0-9_-]+$/);
    visited.add(new URL(page.url()).pathname);
    await waitUntil(async () => ((await page.locator('#import-status').textContent())?.startsWith('done: 200 rows read, 200 created') ? true : undefined), 20_000, 'the import done');
    assert.equal(await page.locator('#import-progress').evaluate((p: HTMLProgressElement) => p.value), 1);
    await accessible(page, 'import job');
    await go('/notify/admin/import');
    const download = page.waitForEvent('download');
    await page.click('#export-all');
    const csv = readFileSync((await (await download).path())!, 'utf8').trim().split('\n');
    assert.equal(csv.length, 1 + 3 + 200);
    await go('/notify/admin/sequences');
    // the contacts page and a person's timeline have a browser test of their own; here they are checked for access
    await go('/notify/admin/contacts');
    await go(String(await page.locator('table a[href^="/notify/admin/contacts/"]').first().getAttribute('href')));
    await go('/notify/admin/lists');
    assert.match((await page.locator('table').textContent()) ?? '', /readers/);
  });

  test('at a phone width (375 px) no page scrolls sideways, and the chart is drawn at that width', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const path of visited) {
      await page.goto(`${url}${path}`);
      await noSidewaysScroll(page, path);
      await accessible(page, `${path} at 375 px`);
    }
    await page.goto(`${url}${campaignPath}?bucket=1m`);
    const narrow = page.locator('.chart-narrow svg');
    assert.equal(await page.locator('.chart-wide').isVisible(), false);
    const box = await narrow.boundingBox();
    assert.ok(box && box.width >= 300 && box.width <= 375, `chart ${box?.width}px wide`);
    // drawn 360 units wide and shown near that size: its 11-12 px labels stay 10 px or more on screen
    assert.ok(box!.width / 360 >= 0.9, 'labels at their size');
    await page.screenshot({ path: join(OUT, 'console-campaign-phone.png'), fullPage: true });
    await page.goto(`${url}/notify/admin/campaigns/new`);
    await page.screenshot({ path: join(OUT, 'console-compose-phone.png'), fullPage: true });
  });
});
