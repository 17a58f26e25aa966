import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { createStore } from '../../store/index.ts';
import { configSources } from '../open.ts';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create or update the database schema (also done on start); a second run changes nothing')
    .action(async (_opts, cmd: Command) => {
      const config = await loadConfig({}, configSources(cmd));
      const store = createStore(config.database);
      try {
        const { applied } = await store.migrate();
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      } finally {
        await store.close();
      }
    });
}
