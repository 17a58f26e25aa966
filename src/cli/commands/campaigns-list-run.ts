import type { Command } from 'commander';
import type { Campaign } from '../../core/types.ts';
import { withNotify } from '../open.ts';

export interface Options {
  status?: string;
  limit: string;
  after?: string;
  json?: boolean;
}

/** `notify campaigns:list [--status s] [--json]`: id, status, when, list and subject, one campaign a line. */
export async function runCampaignsList(opts: Options, cmd: Command): Promise<void> {
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
}

function line(c: Campaign): string {
  const when = c.status === 'scheduled' ? ` at ${c.send_at?.toISOString()}` : c.status === 'sent' && c.sent_at ? ` ${c.sent_at.toISOString()}` : '';
  const reason = c.status_reason ? ` (${c.status_reason})` : '';
  return `${c.id}\t${c.status}${when}${reason}\t${c.list ? `list ${c.list}` : 'every contact'}\t${c.name || c.subject}`;
}
