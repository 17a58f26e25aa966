import { LOAD_CORE, pinSelf } from './lib/cores.ts';
import { startGuard } from './lib/guard.ts';
import { ROUNDS, sized } from './lib/options.ts';
import { count, fmt, info, report } from './lib/report.ts';
import { startRemoteSink } from './lib/sink.ts';
import { median } from './lib/timing.ts';
import { type SendRun, startSendWorker } from './lib/workers.ts';

/**
 * notify:process-drips against campaign dispatch, in CPU time per message of the sending process
 * (process.cpuUsage: wall time on two shared cores would mostly measure waiting):
 *   CPU per drip step  vs  CPU per campaign message                             target <= 1.1
 * One worker process (SQLite, so the database work is in that CPU time too) sends the same 20 KB
 * email to the same contacts as a campaign and as a one-step sequence, in interleaved rounds; the
 * ratio is the median of the per-round ratios. Each timed part starts after a full garbage
 * collection, so neither is charged for the untimed setup's garbage (the drip run's 1,000 enrollments).
 */
const CONTACTS = sized(1000, 50);
const COLLECT = { collect: true };

pinSelf(LOAD_CORE);
const sink = await startRemoteSink();
const worker = await startSendWorker(sink.url);
try {
  await worker.seed(CONTACTS);
  await worker.campaign(); // warm-up of both paths (not counted)
  await worker.drips();
  const guard = await startGuard();
  const rounds: { campaign: number; drips: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const campaign = await delivered(() => worker.campaign(undefined, COLLECT), 'campaign');
    const drips = await delivered(() => worker.drips(undefined, COLLECT), 'process-drips');
    rounds.push({ campaign: (campaign.cpuMs * 1000) / campaign.sent, drips: (drips.cpuMs * 1000) / drips.sent });
  }
  const checked = guard.finish();
  const med = (k: 'campaign' | 'drips') => median(rounds.map((x) => x[k]));
  info(`medians of ${ROUNDS} rounds`, `campaign ${fmt(med('campaign'))} µs, drip step ${fmt(med('drips'))} µs of CPU per message`);
  report(
    {
      name: 'process-drips CPU per step [sqlite]',
      value: med('drips'),
      unit: 'µs',
      baselineName: 'campaign CPU per message',
      baseline: med('campaign'),
      ratio: median(rounds.map((x) => x.drips / x.campaign)),
      target: { on: 'ratio', op: '<=', limit: 1.1 },
      note: `${count(CONTACTS)} messages of each kind per round`,
    },
    checked,
  );
} finally {
  await worker.stop();
  await sink.stop();
}

/** A run whose every message reached the sink once. */
async function delivered(run: () => Promise<SendRun>, what: string): Promise<SendRun> {
  await sink.reset();
  const r = await run();
  const stats = await sink.waitFor(CONTACTS);
  if (r.sent !== CONTACTS || stats.duplicates > 0) throw new Error(`${what} sent ${r.sent} of ${CONTACTS}; ${stats.duplicates} duplicate recipients in the sink`);
  return r;
}
