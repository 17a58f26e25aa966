import type { Command } from 'commander';
import type { Options } from './worker-run.ts';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('run notify:process-drips and pending campaign batches on an interval until SIGTERM/SIGINT')
    .option('-i, --interval <seconds>', 'pause between rounds when there was nothing more to do', '30')
    .action(async (opts: Options, cmd: Command) => (await import('./worker-run.ts')).runWorker(opts, cmd));
}
