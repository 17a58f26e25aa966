import { LOAD_CORE, pinSelf } from './lib/cores.ts';
import { startGuard } from './lib/guard.ts';
import { ROUNDS, sized } from './lib/options.ts';
import { count, fmt, info, report } from './lib/report.ts';
import { startRemoteSink } from './lib/sink.ts';
import { median } from './lib/timing.ts';
import { startNodemailerWorker, startSendWorker } from './lib/workers.ts';

/**
 * Campaign dispatch to a loopback SMTP sink against two nodemailer baselines sending to the same
 * sink with the same pooled transport settings:
 *   notify.campaigns.send  vs  raw nodemailer pool sending pre-built raw MIME    target >= 0.85
 *   notify.campaigns.send  vs  plain sendMail({ html }) per recipient            target >= 3
 * The email is the 20 KB / 30-link one; notify renders, tracks and records every send (SQLite).
 * Sender processes on the subject core, the sink on the other; rounds interleave raw, campaign,
 * sendMail; each ratio is the median of the per-round ratios.
 */
const RECIPIENTS = sized(2000, 50);
const PLAIN = sized(500, 20);

pinSelf(LOAD_CORE);
const sink = await startRemoteSink();
const baselines = await startNodemailerWorker(sink.url);
const worker = await startSendWorker(sink.url);
try {
  await worker.seed(RECIPIENTS);
  // warm-up: JIT, the pools' connections, the campaign compile path (not counted)
  await baselines.rate('raw', RECIPIENTS);
  await baselines.rate('html', PLAIN);
  await worker.campaign();
  const guard = await startGuard();
  const rounds: { raw: number; plain: number; campaign: number; cpuUs: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const raw = await baselines.rate('raw', RECIPIENTS);
    await sink.reset();
    const run = await worker.campaign();
    const stats = await sink.waitFor(RECIPIENTS);
    if (run.sent !== RECIPIENTS || stats.duplicates > 0) throw new Error(`campaign sent ${run.sent} of ${RECIPIENTS}; the sink has ${stats.messages}, ${stats.duplicates} duplicates`);
    const plain = await baselines.rate('html', PLAIN);
    rounds.push({ raw, plain, campaign: RECIPIENTS / (run.ms / 1000), cpuUs: (run.cpuMs * 1000) / run.sent });
  }
  const checked = guard.finish();
  const med = (k: 'raw' | 'plain' | 'campaign' | 'cpuUs') => median(rounds.map((x) => x[k]));
  const ratio = (b: 'raw' | 'plain') => median(rounds.map((x) => x.campaign / x[b]));
  info(`medians of ${ROUNDS} rounds`, `raw ${fmt(med('raw'))}, campaign ${fmt(med('campaign'))}, sendMail({html}) ${fmt(med('plain'))} msg/s`);
  // CPU time of the sending process means something on a loaded machine, where wall-time rates do not
  info('sender CPU per message', `${fmt(med('cpuUs'))} us (median of ${ROUNDS} rounds)`);
  const note = `${count(RECIPIENTS)} recipients per round, every one in the sink once`;
  report({ name: 'campaign dispatch', value: med('campaign'), unit: 'msg/s', baselineName: 'raw nodemailer, pre-built MIME', baseline: med('raw'), ratio: ratio('raw'), target: { on: 'ratio', op: '>=', limit: 0.85 }, note }, checked);
  report({ name: 'campaign dispatch vs sendMail({html})', value: med('campaign'), unit: 'msg/s', baselineName: 'sendMail({html})', baseline: med('plain'), ratio: ratio('plain'), target: { on: 'ratio', op: '>=', limit: 3 } }, checked);
} finally {
  await worker.stop();
  await baselines.stop();
  await sink.stop();
}
