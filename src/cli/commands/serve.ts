import type { Command } from 'commander';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the /notify/* endpoints (open, click, unsubscribe, webhook, capture) on node:http')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', process.env.PORT ?? '3000')
    .option('--host <host>', 'address to bind', '0.0.0.0')
    .option('-w, --workers <n>', 'worker processes sharing the port (node:cluster), for machines with more cores', '1')
    .action(async (opts: { port: string; host: string; workers: string }, cmd: Command) => (await import('./serve-run.ts')).runServe(opts, cmd));
}
