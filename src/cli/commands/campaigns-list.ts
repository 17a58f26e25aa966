import type { Command } from 'commander';
import { CAMPAIGN_STATUSES } from '../../core/types.ts';
import type { Options } from './campaigns-list-run.ts';

export function registerCampaignsList(program: Command): void {
  program
    .command('campaigns:list')
    .description('list campaigns with their status (and scheduled time, or why notify paused one)')
    .option('--status <status>', `only this status: ${CAMPAIGN_STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many', '100')
    .option('--after <id>', 'campaigns after this id (the next page)')
    .option('--json', 'print the records as JSON')
    .action(async (opts: Options, cmd: Command) => (await import('./campaigns-list-run.ts')).runCampaignsList(opts, cmd));
}
