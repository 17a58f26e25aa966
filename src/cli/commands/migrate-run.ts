import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { createStore } from '../../store/index.ts';
import { configSources } from '../config-sources.ts';

/** `notify migrate`: applies the migrations the database lacks and says which. */
export async function runMigrate(cmd: Command): Promise<void> {
  const config = await loadConfig({}, configSources(cmd));
  const store = createStore(config.database);
  try {
    const { applied } = await store.migrate();
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
  } finally {
    await store.close();
  }
}
