import type { Command } from 'commander';
import { CAMPAIGN_STATUSES, type Campaign } from '../../core/types.ts';
import { withNotify } from '../open.ts';

interface Options {
  status?: string;
  limit: string;
  after?: string;
  json?: boolean;
}

/** `notify campaigns:list [--status s] [--json]`: id, status, when, list and subject, one campaign a line. */
export function registerCampaignsList(program: Command): void {
  program
    .command('campaigns:list')
    .description('list campaigns with their status (and scheduled time, or why notify paused one)')
    .option('--status <status>', `only this status: ${CAMPAIGN_STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many', '100')
    .option('--after <id>', 'campaigns after this id (the next page)')
    .option('--json', 'print the records as JSON')
    .action(async (opts: Options, cmd: Command) => {
      await withNotify(
        cmd,
        async (notify) => {
          const rows = await notify.campaigns.list({ status: opts.status as Campaign['status'], limit: Number(opts.limit), after: opts.after === undefined ? undefined : Number(opts.after) });
          if (opts.json) return console.log(JSON.stringify(rows, null, 2));
          if (rows.length === 0) return console.log('no campaigns');
          for (const c of rows) console.log(line(c));
        },
        { readOnly: true },
      );
    });
}

function line(c: Campaign): string {
  const when = c.status === 'scheduled' ? ` at ${c.send_at?.toISOString()}` : c.status === 'sent' && c.sent_at ? ` ${c.sent_at.toISOString()}` : '';
  const reason = c.status_reason ? ` (${c.status_reason})` : '';
  return `${c.id}\t${c.status}${when}${reason}\t${c.list ? `list ${c.list}` : 'every contact'}\t${c.name || c.subject}`;
}
