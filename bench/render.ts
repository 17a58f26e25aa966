import { linkRef, scopeSignature } from '../src/core/links.ts';
import { newToken } from '../src/core/tokens.ts';
import { benchEmailHtml, LINKS } from './lib/email.ts';
import { info, report, skip } from './lib/report.ts';
import { BENCH_SECRET } from './lib/seed.ts';
import { median, microsPerCall } from './lib/timing.ts';

/**
 * Per-recipient render cost after the per-campaign compile, for a 20 KB email with 30 links:
 * goal <= 15 µs. Baseline: what a straightforward implementation does for every recipient: a
 * regex rewrite of every link plus the pixel and unsubscribe placeholders.
 */
const ITERATIONS = 20_000;
const HOST = 'https://track.example.com';
const html = benchEmailHtml();
const tokens = Array.from({ length: 1000 }, () => newToken());

function regexRender(source: string, token: string): string {
  const scope = 'c1';
  const sig = scopeSignature(BENCH_SECRET, token, scope);
  let index = 0;
  return source
    .replace(/href="(https?:\/\/[^"]*)"/gi, () => `href="${HOST}/notify/click/${token}?l=${linkRef(scope, index++, sig)}"`)
    .replace('{notify_unsubscribe_url}', `${HOST}/notify/unsubscribe/${token}`)
    .replace('{notify_tracking_pixel}', `<img src="${HOST}/notify/open/${token}" width="1" height="1" alt="">`);
}

const check = regexRender(html, tokens[0]);
if ((check.match(/\/notify\/click\//g) ?? []).length !== LINKS) throw new Error('the baseline did not rewrite every link');
const baseline = median([1, 2, 3].map(() => microsPerCall((i) => regexRender(html, tokens[i % tokens.length]), ITERATIONS)));
info('baseline regex rewrite per recipient', `${baseline.toFixed(1)} µs (${(html.length / 1024).toFixed(1)} KB, ${LINKS} links)`);

const compiled = await loadCompiler();
if (!compiled) skip('per-recipient render after compile', 'the renderer (src/render/) has no per-campaign compile yet');
else {
  const figure = median([1, 2, 3].map(() => microsPerCall((i) => compiled(tokens[i % tokens.length]), ITERATIONS)));
  report({ name: 'per-recipient render after compile', figure, unit: 'µs', baselineName: 'regex rewrite', baseline, kind: 'time', goal: { on: 'figure', max: 15 } });
}

/** notify's compile step, when it exists: returns the per-recipient render for this email. */
async function loadCompiler(): Promise<((token: string) => unknown) | undefined> {
  return undefined;
}
