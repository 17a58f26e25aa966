import { linkRef, scopeSignature } from '../src/core/link-refs.ts';
import { newToken } from '../src/core/tokens.ts';
import { benchEmailHtml, LINKS } from './lib/email.ts';
import { SUBJECT_CORE, pinSelf } from './lib/cores.ts';
import { startGuard } from './lib/guard.ts';
import { ROUNDS, sized } from './lib/options.ts';
import { count, info, report } from './lib/report.ts';
import { BENCH_SECRET } from './lib/seed.ts';
import { median, microsPerCall, microsPerCallAsync } from './lib/timing.ts';

/**
 * Per-recipient render cost after the per-campaign compile, for a 20 KB email with 30 links:
 * target <= 10 µs. Baseline: what a straightforward implementation does for every recipient: a
 * regex rewrite of every link plus the pixel and unsubscribe placeholders. One process on the
 * subject core; rounds interleave baseline and subject; figures are medians over the rounds.
 */
const ITERATIONS = sized(20_000, 500);
/** calls made by microsPerCall: the timed ones and the warm-up before them */
const CALLS = ITERATIONS + Math.max(200, ITERATIONS / 10);

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

pinSelf(SUBJECT_CORE);
const check = regexRender(html, tokens[0]);
if ((check.match(/\/notify\/click\//g) ?? []).length !== LINKS) throw new Error('the baseline did not rewrite every link');
const { render, substitute } = await loadCompiler();
const guard = await startGuard();
const rounds: { baseline: number; render: number; substitute: number; listed: number; listedCpu: number; joined: number; joinedCpu: number; baselineCpu: number; renderCpu: number }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const baseline = await cpuOf(() => microsPerCall((i) => regexRender(html, tokens[i % tokens.length]), ITERATIONS));
  const subject = await cpuOf(() => microsPerCallAsync((i) => render(tokens[i % tokens.length]), ITERATIONS));
  const listed = await cpuOf(() => microsPerCallAsync((i) => render(tokens[i % tokens.length]).then((m) => m.rawParts!.length), ITERATIONS));
  const joined = await cpuOf(() => microsPerCallAsync((i) => render(tokens[i % tokens.length]).then((m) => m.raw), ITERATIONS));
  rounds.push({ baseline: baseline.wall, baselineCpu: baseline.cpu, render: subject.wall, renderCpu: subject.cpu, listed: listed.wall, listedCpu: listed.cpu, joined: joined.wall, joinedCpu: joined.cpu, substitute: await microsPerCallAsync((i) => substitute(tokens[i % tokens.length]), ITERATIONS) });
}
const checked = guard.finish();
const med = (k: keyof (typeof rounds)[number]) => median(rounds.map((x) => x[k]));
// render leaves the bytes to the mailer: notify's SMTP client and the outbox write the list of buffers
// (rawParts); SES, a DKIM signer and custom mailers read `raw`, the list joined into one
info('render and the list of buffers (what the SMTP client and the outbox write)', `${med('listed').toFixed(1)} µs, CPU ${med('listedCpu').toFixed(1)} µs`);
info('render and the message joined into one buffer (what SES, DKIM and custom mailers read)', `${med('joined').toFixed(1)} µs, CPU ${med('joinedCpu').toFixed(1)} µs`);
info('of which substitution only (signature + values into the compiled parts, no MIME assembly)', `${med('substitute').toFixed(1)} µs`);
// CPU time of the process over the same calls: other work on the machine stretches wall time far more
info('CPU time per call (process.cpuUsage, warm-up included)', `render ${med('renderCpu').toFixed(1)} µs, regex rewrite ${med('baselineCpu').toFixed(1)} µs`);
report({ name: 'per-recipient render after compile', value: med('render'), unit: 'µs', baselineName: 'regex rewrite', baseline: med('baseline'), target: { on: 'value', op: '<=', limit: 10 }, note: `${(html.length / 1024).toFixed(1)} KB, ${LINKS} links, ${count(ITERATIONS)} recipients per round` }, checked);

async function cpuOf(timed: () => number | Promise<number>): Promise<{ wall: number; cpu: number }> {
  const start = process.cpuUsage();
  const wall = await timed();
  const used = process.cpuUsage(start);
  return { wall, cpu: (used.user + used.system) / CALLS };
}

/**
 * notify's per-campaign compile (markdown/Liquid/layout/CSS inlining/text part/tracking rewrite,
 * done once through the dispatcher that campaigns use), then the per-recipient step timed here:
 * values filled in and the complete MIME message assembled as a list of buffers (dispatcher.render:
 * what a send costs before the mailer is called; a mailer that needs one buffer then joins them).
 */
async function loadCompiler() {
  const { createNotify } = await import('../src/notify.ts');
  const notify = await createNotify({ database: 'sqlite::memory:', configFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com', baseUrl: HOST, secret: BENCH_SECRET });
  const message = await notify.context.dispatcher.prepare('c1', { subject: 'This week', html });
  const contact = { id: 1, email: 'reader@example.com', name: 'Reader', status: 'subscribed', unsubscribe_token: newToken(), attributes: {} };
  const sample = await notify.context.dispatcher.render(message, { send: { id: 1, token: tokens[0] }, contact });
  const body = sample.raw?.toString('latin1') ?? '';
  info('compiled message', `${(body.length / 1024).toFixed(1)} KB MIME per recipient, ${(body.match(/notify\/click\//g) ?? []).length} tracked links (html + text parts)`);
  // the substitution alone (values filled into the compiled parts, no headers, no one-buffer message)
  const { personalize } = await import('../src/render/personalize.ts');
  const { encodeValues, encodedPart } = await import('../src/mail/encoded-parts.ts');
  const { scopeSignature: sign } = await import('../src/core/link-refs.ts');
  const substitute = async (token: string) => {
    const p = await personalize(message.compiled, { token, sig: sign(BENCH_SECRET, token, 'c1'), unsubscribeUrl: `${HOST}/notify/unsubscribe/${contact.unsubscribe_token}?s=${token}`, contact });
    const text = encodeValues(p.recipient, p.textValues);
    let chars = encodedPart(p.variant.text, text).length;
    if (p.variant.html) chars += encodedPart(p.variant.html, encodeValues(p.recipient, p.htmlValues, text)).length;
    return chars;
  };
  let id = 1;
  // dispatcher.render is async only for per-recipient Liquid tags; this email has none, so each call resolves at once
  return { substitute, render: (token: string) => notify.context.dispatcher.render(message, { send: { id: id++, token }, contact }) };
}
