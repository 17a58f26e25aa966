import type { Command } from 'commander';

/** The commands that move a campaign through its states; campaigns-lifecycle-run.ts does each. */
const STATE_CHANGES: [name: 'pause' | 'resume' | 'cancel', description: string][] = [
  ['pause', 'stop sending a campaign (returns once no further message leaves)'],
  ['resume', 'continue a paused campaign where it stopped (nobody gets it twice)'],
  ['cancel', 'stop a campaign for good'],
];

const run = () => import('./campaigns-lifecycle-run.ts');

export function registerCampaignsLifecycle(program: Command): void {
  program
    .command('campaigns:schedule <campaignId> <sendAt>')
    .description('send a campaign at a time (ISO 8601; without an offset it is UTC); `notify worker` starts it then')
    .action(async (id: string, sendAt: string, _opts: unknown, cmd: Command) => (await run()).runSchedule(id, sendAt, cmd));
  for (const [name, description] of STATE_CHANGES) {
    program
      .command(`campaigns:${name} <campaignId>`)
      .description(description)
      .action(async (id: string, _opts: unknown, cmd: Command) => (await run()).runStateChange(name, id, cmd));
  }
  program
    .command('campaigns:test <campaignId>')
    .description('send real rendered copies to these addresses (links work; nothing is counted)')
    .requiredOption('--to <addresses...>', 'one or more addresses')
    .action(async (id: string, opts: { to: string[] }, cmd: Command) => (await run()).runTest(id, opts, cmd));
}
