import type { Command } from 'commander';

export function registerProcessDrips(program: Command): void {
  program
    .command('notify:process-drips')
    .description('send every drip step that is due (one run: at most batchSize emails); safe to run from several machines at once')
    .option('--json', 'print the run as JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => (await import('./process-drips-run.ts')).runProcessDrips(opts, cmd));
}
