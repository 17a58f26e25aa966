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
export function registerCampaignsLifecycle(program: Command): void {
  program
    .command('campaigns:schedule <campaignId> <sendAt>')
    .description('send a campaign at a time (ISO 8601; without an offset it is UTC); `notify worker` starts it then')
    .action(async (id: string, sendAt: string, _opts: unknown, cmd: Command) => {
      await withNotify(cmd, async (notify) => {
        const c = await notify.campaigns.schedule(campaignId(id), sendAt);
        console.log(`campaign ${c.id} scheduled for ${c.send_at?.toISOString()}; a running \`notify worker\` starts it then`);
      });
    });
  const actions: [string, string, (n: Notify, id: number) => Promise<Campaign>, (c: Campaign) => string][] = [
    ['pause', 'stop sending a campaign (returns once no further message leaves)', (n, id) => n.campaigns.pause(id), (c) => `campaign ${c.id} paused; resume it with: notify campaigns:resume ${c.id}`],
    ['resume', 'continue a paused campaign where it stopped (nobody gets it twice)', (n, id) => n.campaigns.resume(id), resumed],
    ['cancel', 'stop a campaign for good', (n, id) => n.campaigns.cancel(id), (c) => `campaign ${c.id} cancelled`],
  ];
  for (const [name, description, act, say] of actions) {
    program
      .command(`campaigns:${name} <campaignId>`)
      .description(description)
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        await withNotify(cmd, async (notify) => console.log(say(await act(notify, campaignId(id)))));
      });
  }
  program
    .command('campaigns:test <campaignId>')
    .description('send real rendered copies to these addresses (links work; nothing is counted)')
    .requiredOption('--to <addresses...>', 'one or more addresses')
    .action(async (id: string, opts: { to: string[] }, cmd: Command) => {
      await withNotify(cmd, async (notify) => {
        const r = await notify.campaigns.sendTest(campaignId(id), { to: opts.to.flatMap((a) => a.split(',')).filter(Boolean) });
        for (const to of r.sent) console.log(`sent a test copy to ${to}`);
        for (const f of r.failed) console.error(`failed to send a test copy to ${f.to}: ${f.error}`);
        if (r.sent.length === 0) throw new NotifyError('MAILER_FAILED', 'no test copy was sent');
      });
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
