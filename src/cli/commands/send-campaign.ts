import type { Command } from 'commander';
import type { Options } from './send-campaign-run.ts';

export function registerSendCampaign(program: Command): void {
  program
    .command('notify:send-campaign <campaignId>')
    .description('send the next batch (batchSize emails) of a campaign; later runs continue where this one stopped')
    .option('--all', 'repeat runs until the campaign is sent')
    .action(async (campaignId: string, opts: Options, cmd: Command) => (await import('./send-campaign-run.ts')).runSendCampaign(campaignId, opts, cmd));
}
