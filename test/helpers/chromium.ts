import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * The browser the page tests drive: Debian's chromium through playwright-core, which never downloads one.
 * NOTIFY_TEST_CHROMIUM (which `.ci/run` sets) or a CI variable makes the browser required: a missing one
 * then fails those tests instead of skipping them, so a CI machine whose chromium lives elsewhere, or
 * is gone, cannot pass without having run them. On a developer's machine without it they are skipped.
 */
const named = process.env.NOTIFY_TEST_CHROMIUM;
const ci = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI.toLowerCase());

export const CHROMIUM = named || '/usr/bin/chromium';

export const BROWSER_SKIP: string | false = named || ci || existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM} (set NOTIFY_TEST_CHROMIUM to its path)`;

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * A fresh browser profile signed in to the admin pages with the token (HTTP Basic, sent with every
 * request: an admin page answers a browser without credentials with the sign-in form, not a Basic
 * challenge, so credentials that wait for a challenge would never be sent), on which only
 * 127.0.0.1 answers: nothing leaves the machine. Its first page.
 */
export async function openAdminBrowser(token: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'notify-chromium-')), {
    executablePath: CHROMIUM,
    args: ARGS,
    extraHTTPHeaders: { authorization: `Basic ${Buffer.from(`admin:${token}`).toString('base64')}` },
    viewport: { width: 1280, height: 900 },
  });
  await context.route(/^https?:\/\/(?!127\.0\.0\.1:)/, (route) => route.abort());
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}
