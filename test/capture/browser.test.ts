import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { manualClock } from '../../src/core/clock.ts';
import { notify_flash, notify_form } from '../../src/index.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { BROWSER_SKIP, CHROMIUM } from '../helpers/chromium.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

describe('capture form in a real browser', { skip: BROWSER_SKIP }, () => {
  const db = freshDatabaseUrl('sqlite');
  let notify: Notify;
  let server: Server;
  let base: string;
  let browser: Browser;
  before(async () => {
    // The limit's window is counted on a clock that stands still (the database store reads the injected
    // clock; the memory store reads the wall clock): the third post is refused however slow the machine.
    notify = await createNotify(testOptions(db.url, { captureRateLimit: 2, captureLists: ['news'], rateLimitStore: 'database', clock: manualClock() }));
    // The application: its own pages, with /notify/* mounted.
    server = createServer((req, res) => {
      if (req.url?.startsWith('/notify/')) return notify.listener(req, res);
      // Only the pages that show the flash clear it. A catch-all that also answered the browser's
      // /favicon.ico with the clearing cookie raced the 429 page's refresh: when the favicon answer came
      // first, the form page was loaded without notify_errors.
      if (req.url !== '/signup' && req.url !== '/thanks') return res.writeHead(404).end();
      const flash = notify_flash(req);
      res.setHeader('Set-Cookie', flash.clear);
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      if (req.url === '/thanks') return res.end(`<h1>Thanks page</h1><p id="ok">${flash.success.join(' ')}</p>`);
      res.end(`<h1>Sign up</h1>${notify_form({ config: notify.config, list: 'news', redirect: '/thanks', flash: req })}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await notify?.close();
    db.cleanup();
  });

  test('a sign-up lands on the redirect page with the success flash; over the limit the browser is sent back to the form with notify_errors', async () => {
    const page = await browser.newPage();
    /**
     * Posts the form and waits for the page the answer leads to. Waiting for a URL is not enough: the
     * form page is /signup already before the post navigates away. So: the POST's own answer, then the
     * next document to finish loading that is not the 429 answer's meta-refresh page (/notify/capture).
     */
    const signUp = async (email: string) => {
      await page.goto(`${base}/signup`);
      await page.fill('input[name=email]', email);
      const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/notify/capture');
      const landed = page.waitForEvent('load', { predicate: (p: Page) => new URL(p.url()).pathname !== '/notify/capture' });
      await page.click('button[type=submit]');
      const status = (await answered).status();
      await landed;
      return status;
    };
    await page.goto(`${base}/signup`);
    const hp = await page.locator('input[name=notify_hp]').boundingBox();
    assert.ok(hp && hp.x < 0, 'the honeypot is off-screen');

    assert.equal(await signUp('browser1@example.com'), 303);
    assert.equal(new URL(page.url()).pathname, '/thanks');
    assert.equal(await page.textContent('#ok'), 'Thanks for subscribing!');
    assert.equal(await signUp('browser2@example.com'), 303);
    assert.equal(new URL(page.url()).pathname, '/thanks');
    assert.equal(await page.textContent('#ok'), 'Thanks for subscribing!');

    assert.equal(await signUp('browser3@example.com'), 429);
    assert.equal(new URL(page.url()).pathname, '/signup', 'the 429 sent the browser back to the form');
    assert.equal(await page.locator('.notify-errors').count(), 1, 'the loaded form page shows the flash');
    assert.equal(await page.textContent('.notify-errors'), 'Too many sign-ups from your network. Please try again in a minute.');
    assert.equal(await notify.contacts.get('browser3@example.com'), undefined);
    assert.deepEqual((await notify.contacts.get('browser1@example.com'))?.lists, ['news']);
    await page.reload();
    assert.equal(await page.locator('.notify-errors').count(), 0, 'the page cleared the flash: shown once');
  });
});
