import type { Command } from 'commander';
import { type CreateNotifyOptions, createNotify, type Notify } from '../notify.ts';

/** Opens an instance with the program's --config, runs fn, and always closes it. */
export async function withNotify<T>(cmd: Command, fn: (notify: Notify) => Promise<T>, extra: CreateNotifyOptions = {}): Promise<T> {
  const { config } = cmd.optsWithGlobals<{ config?: string }>();
  const notify = await createNotify({ configFile: config, ...extra });
  try {
    return await fn(notify);
  } finally {
    await notify.close();
  }
}
