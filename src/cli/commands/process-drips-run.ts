import type { Command } from 'commander';
import type { DripRunDetail } from '../../core/drip-run.ts';
import { runDrips } from '../../core/drip-run.ts';
import { NotifyError } from '../../errors.ts';
import { withNotify } from '../open.ts';
import { boundSenderHeap } from '../sender-heap.ts';

/**
 * `notify notify:process-drips`: one run (at most batchSize enrollments). Schedule it (cron, a
 * systemd timer) or use `notify worker`. Exit 1 when every attempted send failed (the mail server
 * is down or refusing), so a scheduler notices.
 */
export async function runProcessDrips(opts: { json?: boolean }, cmd: Command): Promise<void> {
  boundSenderHeap();
  await withNotify(cmd, async (notify) => {
    const r = await runDrips(notify.context);
    console.log(opts.json ? JSON.stringify(r) : dripSummary(r));
    if (r.sent === 0 && r.retried + r.failed > 0) throw new NotifyError('MAILER_FAILED', 'every drip send in this run failed; see the enrollments\' last_error');
  });
}

export function dripSummary(r: DripRunDetail): string {
  const extra = [
    r.reclaimed && `${r.reclaimed} reclaimed from an interrupted run`,
    r.cancelled && `${r.cancelled} cancelled (contact suppressed)`,
    r.advanced && `${r.advanced} already delivered before an interruption (advanced, not resent)`,
    r.interrupted && `${r.interrupted} interrupted mid-send by a crash (marked failed, not resent)`,
  ].filter(Boolean);
  return `drips: sent ${r.sent}, retried ${r.retried}, failed ${r.failed} (of ${r.claimed} due)${extra.length ? `; ${extra.join('; ')}` : ''}`;
}
