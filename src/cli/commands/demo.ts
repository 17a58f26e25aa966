import type { Command } from 'commander';
import type { Options } from './demo-run.ts';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('try notify with no mail server: sample contacts and a campaign in ./notify-demo/, then the admin pages to watch the stats move')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', '3000')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--dir <folder>', 'demo folder: its database and outbox (cleared on every run)', 'notify-demo')
    .option('--no-serve', 'seed the demo folder and exit instead of serving')
    .action(async (opts: Options, cmd: Command) => (await import('./demo-run.ts')).runDemo(opts, cmd));
}
