import { existsSync } from 'node:fs';

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
