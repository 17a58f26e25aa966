import { LOAD_CORE, pinSelf } from './lib/cores.ts';
import { measureCpu } from './lib/cpu.ts';
import { benchDatabase, postgresAvailable } from './lib/db.ts';
import { startGuard } from './lib/guard.ts';
import { ROUNDS, sized } from './lib/options.ts';
import { count, fmt, info, report } from './lib/report.ts';
import { startRemoteSink } from './lib/sink.ts';
import { median } from './lib/timing.ts';
import { startNodemailerWorker, startSendWorker } from './lib/workers.ts';

/**
 * Campaign dispatch to a loopback SMTP sink against two nodemailer baselines sending to the same
 * sink with the same pooled transport settings:
 *   notify.campaigns.send  vs  raw nodemailer pool sending notify's own message bytes, pre-built   target >= 0.85
 *   (also printed: the same pool sending a smaller nodemailer-composed MIME, html + a one-line text)
 *   notify.campaigns.send  vs  plain sendMail({ html }) per recipient            target >= 3
 * The email is the 20 KB / 30-link one; notify renders, tracks and records every send, on SQLite
 * and (when it answers) PostgreSQL, each sender in a process of its own. Sender processes on the
 * subject core, the sink on the other; rounds interleave raw, campaign (each engine), sendMail;
 * each ratio is the median of the per-round ratios.
 */
const RECIPIENTS = sized(2000, 50);
const PLAIN = sized(500, 20);

pinSelf(LOAD_CORE);
const sink = await startRemoteSink();
const baselines = await startNodemailerWorker(sink.url);
const worker = await startSendWorker(sink.url);
const pgDb = (await postgresAvailable()) ? benchDatabase('postgres') : undefined;
const pgWorker = pgDb && (await startSendWorker(sink.url, pgDb.url));
if (!pgDb) info('campaign dispatch [postgres]', 'skipped: PostgreSQL does not answer (set NOTIFY_BENCH_PG_URL)');
try {
  const workers = [worker, ...(pgWorker ? [pgWorker] : [])];
  for (const w of workers) await w.seed(RECIPIENTS);
  // warm-up: JIT, the pools' connections, the campaign compile path (not counted)
  await baselines.rate('raw', RECIPIENTS);
  await baselines.rate('same', RECIPIENTS);
  await baselines.rate('html', PLAIN);
  for (const w of workers) await w.campaign();
  const guard = await startGuard();
  const rounds: { raw: number; same: number; plain: number; campaign: number[]; cpuUs: number[]; dbUs: number[] }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const raw = await baselines.rate('raw', RECIPIENTS);
    const same = await baselines.rate('same', RECIPIENTS);
    const round = { raw, same, plain: 0, campaign: [] as number[], cpuUs: [] as number[], dbUs: [] as number[] };
    for (const w of workers) {
      await sink.reset();
      // the sender is pinned, PostgreSQL's backends are not: their CPU is part of what a send costs
      const db = w === pgWorker ? pgDb?.url : undefined;
      const { result: run, databaseUs = 0 } = await measureCpu(w.child.proc.pid!, db, () => w.campaign());
      const stats = await sink.waitFor(RECIPIENTS);
      if (run.sent !== RECIPIENTS || stats.duplicates > 0) throw new Error(`campaign sent ${run.sent} of ${RECIPIENTS}; the sink has ${stats.messages}, ${stats.duplicates} duplicates`);
      round.campaign.push(RECIPIENTS / (run.ms / 1000));
      round.cpuUs.push((run.cpuMs * 1000) / run.sent);
      round.dbUs.push(databaseUs / run.sent);
    }
    round.plain = await baselines.rate('html', PLAIN);
    rounds.push(round);
  }
  const checked = guard.finish();
  const note = `${count(RECIPIENTS)} recipients per round, every one in the sink once`;
  workers.forEach((_, e) => {
    const engine = e === 0 ? '' : ' [postgres]';
    const campaign = median(rounds.map((x) => x.campaign[e]));
    const ratio = (b: 'raw' | 'same' | 'plain') => median(rounds.map((x) => x.campaign[e] / x[b]));
    const raw = median(rounds.map((x) => x.raw));
    const same = median(rounds.map((x) => x.same));
    const plain = median(rounds.map((x) => x.plain));
    info(`medians of ${ROUNDS} rounds${engine}`, `raw (notify's bytes) ${fmt(same)}, raw (smaller nodemailer MIME) ${fmt(raw)}, campaign ${fmt(campaign)}, sendMail({html}) ${fmt(plain)} msg/s`);
    info(`campaign dispatch / raw smaller nodemailer MIME${engine}`, `${ratio('raw').toFixed(3)} (not the target's baseline: a smaller message)`);
    // CPU time of the sending process means something on a loaded machine, where wall-time rates do not
    info(`sender CPU per message${engine}`, `${fmt(median(rounds.map((x) => x.cpuUs[e])))} us (median of ${ROUNDS} rounds)`);
    if (e > 0) info(`PostgreSQL backends' CPU per message${engine}`, `${fmt(median(rounds.map((x) => x.dbUs[e])))} us (median of ${ROUNDS} rounds; unpinned, 10 ms ticks)`);
    report({ name: `campaign dispatch${engine}`, value: campaign, unit: 'msg/s', baselineName: "raw nodemailer, notify's bytes pre-built", baseline: same, ratio: ratio('same'), target: { on: 'ratio', op: '>=', limit: 0.85 }, note }, checked);
    report({ name: `campaign dispatch vs sendMail({html})${engine}`, value: campaign, unit: 'msg/s', baselineName: 'sendMail({html})', baseline: plain, ratio: ratio('plain'), target: { on: 'ratio', op: '>=', limit: 3 } }, checked);
  });
} finally {
  await worker.stop();
  await pgWorker?.stop();
  await pgDb?.drop();
  await baselines.stop();
  await sink.stop();
}
