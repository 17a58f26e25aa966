import type { Command } from 'commander';

// The action loads the store only when this command runs (see main.ts).
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create or update the database schema (also done on start); a second run changes nothing')
    .action(async (_opts: unknown, cmd: Command) => (await import('./migrate-run.ts')).runMigrate(cmd));
}
