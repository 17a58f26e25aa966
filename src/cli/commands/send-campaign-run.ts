import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { RunProgress } from '../../core/campaign-run.ts';
import type { CampaignRunResult } from '../../core/types.ts';
import { NotifyError } from '../../errors.ts';
import { withNotify } from '../open.ts';
import { boundSenderHeap } from '../sender-heap.ts';

export interface Options {
  all?: boolean;
}

/**
 * `notify notify:send-campaign <campaignId>`: one run (at most batchSize emails); schedule it, or
 * pass --all to repeat runs until the campaign is sent. A progress bar on a terminal, one plain line
 * per chunk otherwise (logs, cron mail), a summary at the end. Exit code 1 on a fatal error, which
 * includes a run where every attempted send failed (the mail server is down or refusing).
 */
export async function runSendCampaign(campaignId: string, opts: Options, cmd: Command): Promise<void> {
  if (!/^[0-9]+$/.test(campaignId)) throw new NotifyError('INVALID_INPUT', `Campaign id must be a number (got ${JSON.stringify(campaignId)})`);
  boundSenderHeap();
  await withNotify(cmd, async (notify) => {
    const id = Number(campaignId);
    for (let run = 1; ; run++) {
      const result = await runWithProgress((onProgress) => notify.campaigns.send(id, { onProgress }), process.stdout.isTTY === true);
      const acted = result.sent + result.failed + result.suppressed + result.deferred + result.interrupted > 0;
      if (acted || !result.note) console.log(summary(result, opts.all ? run : undefined));
      if (result.note) {
        // why it sent nothing (more): paused, cancelled, scheduled for later, a dry run
        console.log(result.note);
        break;
      }
      if (result.sent === 0 && result.failed + result.deferred > 0) {
        throw new NotifyError('MAILER_FAILED', `every send of campaign ${id} in this run failed${result.deferred ? ' or was deferred' : ''}; see the send records' error`);
      }
      if (!opts.all || result.done || result.sent + result.failed + result.suppressed + result.deferred === 0) break;
    }
  });
}

async function runWithProgress(run: (onProgress: (p: RunProgress) => void) => Promise<CampaignRunResult>, tty: boolean): Promise<CampaignRunResult> {
  if (!tty) {
    let last = -1;
    return run((p) => {
      const done = p.sent + p.failed + p.suppressed;
      if (done === last) return;
      last = done;
      console.log(`campaign ${p.campaignId}: ${done}/${p.expected} (sent ${p.sent}, failed ${p.failed}, suppressed ${p.suppressed})`);
    });
  }
  const bar = new cliProgress.SingleBar(
    { format: 'campaign {id} [{bar}] {value}/{total} | sent {sent} failed {failed} suppressed {suppressed} | {eta_formatted}', hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  try {
    return await run((p) => {
      const done = p.sent + p.failed + p.suppressed;
      const payload = { id: p.campaignId, sent: p.sent, failed: p.failed, suppressed: p.suppressed };
      if (!started) bar.start(Math.max(p.expected, 1), done, payload);
      started = true;
      bar.setTotal(Math.max(p.expected, done, 1));
      bar.update(done, payload);
    });
  } finally {
    if (started) bar.stop();
  }
}

export function summary(r: CampaignRunResult, run?: number): string {
  const head = `campaign ${r.campaignId}${run ? ` run ${run}` : ''}: sent ${r.sent}, failed ${r.failed}, suppressed ${r.suppressed}`;
  const deferred = r.deferred ? `, deferred ${r.deferred} (a temporary failure: tried again later)` : '';
  const interrupted = r.interrupted ? `, ${r.interrupted} interrupted by an earlier crash (marked failed, not resent)` : '';
  const waiting = r.waiting ? `, ${r.waiting} waiting for a retry${r.nextAttemptAt ? ` (next at ${r.nextAttemptAt.toISOString()})` : ''}` : '';
  const tail = r.done ? ' - campaign sent, nothing remains' : r.status !== 'sending' ? `, ${r.remaining} remaining (campaign ${r.status})` : `, ${r.remaining} remaining (run again to continue)`;
  return head + deferred + interrupted + waiting + tail;
}
