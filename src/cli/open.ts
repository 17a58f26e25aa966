import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { NotifyError } from '../errors.ts';
import { createLogger, type LogAudience } from '../log.ts';
import { type CreateNotifyOptions, createNotify, type Notify } from '../notify.ts';
import { configSources } from './config-sources.ts';

export interface OpenOptions extends CreateNotifyOptions {
  /**
   * The command only reads: a SQLite database that is not there is an error saying where it was
   * looked for, instead of an empty one created in the wrong folder.
   */
  readOnly?: boolean;
  /** who reads its log lines: a person (default) or, for `worker`, a log collector (see log.ts) */
  logAudience?: LogAudience;
}

/** Opens an instance with the program's --config and --env-file, runs fn, and always closes it. */
export async function withNotify<T>(cmd: Command, fn: (notify: Notify) => Promise<T>, { readOnly, logAudience = 'command', ...extra }: OpenOptions = {}): Promise<T> {
  const sources = configSources(cmd);
  if (readOnly) await assertDatabaseExists(sources);
  const { json } = cmd.opts<{ json?: boolean }>();
  const notify = await createNotify({ ...sources, logger: (config) => createLogger(config, logAudience, { json }), ...extra });
  try {
    return await fn(notify);
  } finally {
    await notify.close();
  }
}

async function assertDatabaseExists(sources: { configFile?: string; envFile?: string }): Promise<void> {
  const { database } = await loadConfig({}, sources);
  const file = database.startsWith('sqlite:') ? database.slice('sqlite:'.length) : undefined;
  if (file === undefined || file === ':memory:' || existsSync(resolve(file))) return;
  throw new NotifyError(
    'NOT_FOUND',
    `No database at ${resolve(file)} (database: ${database}). Run this in the folder that holds it, or set the database option: "database" in notify.config.json, NOTIFY_DATABASE in .env or the environment, or --config <file>`,
    { path: resolve(file) },
  );
}
