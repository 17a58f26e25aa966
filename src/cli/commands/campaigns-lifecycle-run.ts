import type { Command } from 'commander';
import type { Campaign } from '../../core/types.ts';
import { NotifyError } from '../../errors.ts';
import type { Notify } from '../../notify.ts';
import { withNotify } from '../open.ts';

/**
 * `notify campaigns:schedule <id> <ISO time>`, `campaigns:pause|resume|cancel <id>` and
 * `campaigns:test <id> --to <addr...>`. pause and cancel return once no further message of the
 * campaign leaves, whichever worker was sending it. A refused action (INVALID_STATE, NOT_FOUND,
 * a time in the past) exits 1 with the reason.
 */
export async function runSchedule(id: string, sendAt: string, cmd: Command): Promise<void> {
  await withNotify(cmd, async (notify) => {
    const c = await notify.campaigns.schedule(campaignId(id), sendAt);
    console.log(`campaign ${c.id} scheduled for ${c.send_at?.toISOString()}; a running \`notify worker\` starts it then`);
  });
}

const STATE_CHANGES: Record<'pause' | 'resume' | 'cancel', [act: (n: Notify, id: number) => Promise<Campaign>, say: (c: Campaign) => string]> = {
  pause: [(n, id) => n.campaigns.pause(id), (c) => `campaign ${c.id} paused; resume it with: notify campaigns:resume ${c.id}`],
  resume: [(n, id) => n.campaigns.resume(id), resumed],
  cancel: [(n, id) => n.campaigns.cancel(id), (c) => `campaign ${c.id} cancelled`],
};

export async function runStateChange(name: keyof typeof STATE_CHANGES, id: string, cmd: Command): Promise<void> {
  const [act, say] = STATE_CHANGES[name];
  await withNotify(cmd, async (notify) => console.log(say(await act(notify, campaignId(id)))));
}

export async function runTest(id: string, opts: { to: string[] }, cmd: Command): Promise<void> {
  await withNotify(cmd, async (notify) => {
    const r = await notify.campaigns.sendTest(campaignId(id), { to: opts.to.flatMap((a) => a.split(',')).filter(Boolean) });
    for (const to of r.sent) console.log(`sent a test copy to ${to}`);
    for (const f of r.failed) console.error(`failed to send a test copy to ${f.to}: ${f.error}`);
    if (r.sent.length === 0) throw new NotifyError('MAILER_FAILED', 'no test copy was sent');
  });
}

function resumed(c: Campaign): string {
  if (c.status === 'scheduled') return `campaign ${c.id} resumed; it waits for its time, ${c.send_at?.toISOString()}`;
  return `campaign ${c.id} resumed; a running \`notify worker\` (or notify notify:send-campaign ${c.id}) continues it`;
}

export function campaignId(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new NotifyError('INVALID_INPUT', `Campaign id must be a number (got ${JSON.stringify(value)})`);
  return Number(value);
}
