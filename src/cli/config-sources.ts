import type { Command } from 'commander';

/** Where the program's global --config and --env-file point (undefined: the defaults in this folder). */
export function configSources(cmd: Command): { configFile?: string; envFile?: string } {
  const { config, envFile } = cmd.optsWithGlobals<{ config?: string; envFile?: string }>();
  return { configFile: config, envFile };
}
