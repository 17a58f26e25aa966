import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { Deployment, waitUntil } from '../e2e/harness.ts';
import { BROWSER_SKIP, openAdminBrowser } from '../helpers/chromium.ts';
import { ENGINES } from '../helpers/engines.ts';

/**
 * The contacts and lists pages in a real browser against a `notify serve` process (PostgreSQL when
 * the test database is configured): contacts imported and a campaign sent by the CLI through the
 * SMTP sink, the person's open and click made by the browser from the delivered email, then search,
 * filters by list and status, the person's timeline and the lists page. Hostile names must show as
 * text: a dialog (alert) fails the test. Screenshots go to test-output/.
 */
const OUT = resolve('test-output');
const TOKEN = 'browser-audience-token-0123456789';
const HOSTILE = '<img src=x onerror=alert(1)>';
const engine = ENGINES.at(-1)!;

describe(`admin contacts, timeline and lists in a browser against notify serve [${engine}]`, { skip: BROWSER_SKIP }, () => {
  let d: Deployment;
  let url = '';
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    d = await Deployment.open(engine, { config: { adminToken: TOKEN } });
    d.writeFile('news.csv', ['email,name,plan', 'ann@example.com,Ann Lee,pro', `bob@example.com,"${HOSTILE}",free`, 'cy@example.com,Cy Park,free'].join('\n'));
    d.writeFile('tips.csv', ['email,name', 'ann@example.com,', 'dee@example.com,Dee Fox'].join('\n'));
    await d.cli(['contacts:import', 'news.csv', '--list', 'News']);
    await d.cli(['contacts:import', 'tips.csv', '--list', `Tips ${HOSTILE}`]);
    const id = (await d.cli(['campaigns:create', '--name', `Spring ${HOSTILE}`, '--subject', 'Spring', '--markdown', `Hello, see [the lists](${d.baseUrl}/notify/admin/lists).`, '--list', 'News'])).trim().split('\n')[0];
    await d.cli(['notify:send-campaign', id]);
    await d.sink.waitFor(3);
    url = (await d.serve()).url;
    ({ context, page } = await openAdminBrowser(TOKEN));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });

  after(async () => {
    await context?.close();
    await d?.close();
  });

  const emails = async () => (await page.locator('main table tbody tr td:nth-child(2)').allInnerTexts()).map((t) => t.trim());

  test("Ann opens and clicks the delivered email; Cy unsubscribes through its link", async () => {
    const mail = (to: string) => d.sink.messages.find((m) => m.envelope.to[0] === to)!;
    const html = String(mail('ann@example.com').parsed.html);
    const pixel = /src="([^"]*\/notify\/open\/[^"]+)"/.exec(html)?.[1];
    const click = /href="([^"]*\/notify\/click\/[^"]+)"/.exec(html)?.[1];
    assert.ok(pixel && click, 'the email carries a pixel and a tracked link');
    await page.goto(pixel.replace(/&amp;/g, '&'));
    await page.goto(click.replace(/&amp;/g, '&'));
    // the click endpoint redirects to the link's destination, the lists page of this server
    await page.waitForURL(`${url}/notify/admin/lists`);
    const unsubscribe = /href="([^"]*\/notify\/unsubscribe\/[^"]+)"/.exec(String(mail('cy@example.com').parsed.html))?.[1];
    assert.ok(unsubscribe);
    await page.goto(unsubscribe.replace(/&amp;/g, '&'));
    assert.match(await page.locator('body').innerText(), /unsubscribed/i);
  });

  test('contacts: search, filter by list and by status, hostile names shown as text', async () => {
    await page.goto(`${url}/notify/admin/contacts`);
    assert.deepEqual((await emails()).sort(), ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com']);
    assert.ok((await page.locator('main').innerText()).includes(HOSTILE), 'the name is text on the page');

    await page.fill('input[name="search"]', 'ANN');
    await page.click('form.filters button');
    await page.waitForURL(/search=ANN/);
    assert.deepEqual(await emails(), ['ann@example.com']);

    await page.fill('input[name="search"]', '');
    await page.selectOption('select[name="list"]', `Tips ${HOSTILE}`);
    await page.click('form.filters button');
    await page.waitForURL(/list=Tips/);
    assert.deepEqual((await emails()).sort(), ['ann@example.com', 'dee@example.com']);

    await page.selectOption('select[name="list"]', '');
    await page.selectOption('select[name="status"]', 'unsubscribed');
    await page.click('form.filters button');
    await page.waitForURL(/status=unsubscribed/);
    assert.deepEqual(await emails(), ['cy@example.com']);
    await page.screenshot({ path: join(OUT, 'admin-contacts.png'), fullPage: true });
  });

  test("a person's timeline: the campaign sent, opened, clicked, the lists joined; Cy's unsubscribe as a status change", async () => {
    await page.goto(`${url}/notify/admin/contacts?search=ann`);
    await page.click('main table a:has-text("ann@example.com")');
    await page.waitForURL(/\/notify\/admin\/contacts\/[0-9]+$/);
    assert.equal(await page.locator('#contact-email').textContent(), 'ann@example.com');
    // serve buffers opens and clicks and writes them within a second or so
    const whats = await waitUntil(
      async () => {
        await page.reload();
        const list = (await page.locator('#timeline tbody tr td:nth-child(2)').allInnerTexts()).map((t) => t.trim());
        return list.includes('Clicked') && list.includes('Opened') ? list : undefined;
      },
      20_000,
      'the open and the click on the timeline',
    );
    assert.deepEqual(whats, ['Clicked', 'Opened', 'Email sent', `Joined list Tips ${HOSTILE}`, 'Joined list News', 'Contact created']);
    const sentRow = page.locator('#timeline tbody tr', { hasText: 'Email sent' });
    assert.equal(await sentRow.locator('td').nth(2).innerText(), `Spring ${HOSTILE}`);
    await page.screenshot({ path: join(OUT, 'admin-contact-timeline.png'), fullPage: true });

    await page.goto(`${url}/notify/admin/contacts?search=cy%40`);
    await page.click('main table a:has-text("cy@example.com")');
    await page.waitForURL(/\/notify\/admin\/contacts\/[0-9]+$/);
    assert.equal(await page.locator('#contact-status').textContent(), 'unsubscribed');
    const rows = await page.locator('#timeline tbody tr').allInnerTexts();
    assert.match(rows[0], /Unsubscribed/);
    assert.ok(rows.some((r) => /Status changed\s+subscribed → unsubscribed/.test(r)), rows.join('\n'));
  });

  test('lists page: names as text, subscriber counts, a link to the list\'s contacts', async () => {
    await page.click('header nav >> text=Lists');
    await page.waitForURL(`${url}/notify/admin/lists`);
    const rows = (await page.locator('main table tbody tr').allInnerTexts()).map((r) => r.split('\t').map((c) => c.trim()));
    assert.deepEqual(
      rows.map((r) => [r[0], r[3]]),
      [
        ['News', '3'],
        [`Tips ${HOSTILE}`, '2'],
      ],
    );
    await page.screenshot({ path: join(OUT, 'admin-lists.png'), fullPage: true });
    await page.click('main table a:has-text("Tips")');
    await page.waitForURL(/\/notify\/admin\/contacts\?list=/);
    assert.deepEqual((await emails()).sort(), ['ann@example.com', 'dee@example.com']);
    assert.deepEqual(dialogs, [], 'no markup from the data ran');
  });
});
