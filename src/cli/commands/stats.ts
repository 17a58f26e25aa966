import type { Command } from 'commander';

export function registerStats(program: Command): void {
  program
    .command('stats <campaignId>')
    .description("a campaign's figures: the spec's { total, sent, failed, opened, clicked }, human-only ones beside them, per link and over time")
    .option('--json', 'print the whole report as JSON')
    .action(async (campaignId: string, opts: { json?: boolean }, cmd: Command) => (await import('./stats-run.ts')).runStats(campaignId, opts, cmd));
}
