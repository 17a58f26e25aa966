import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { closestName } from './closest-name.ts';
import { parseEnvFile } from './env-file.ts';
import { NotifyError } from './errors.ts';

/** Option values from one source, and where each came from (for messages). */
export interface Layer {
  values: Record<string, unknown>;
  sources: Record<string, string>;
}

/** An environment-style setting: a variable, or a line of a .env file. */
interface Setting {
  name: string;
  value: string;
  /** `environment variable NOTIFY_X` or `NOTIFY_X in /app/.env:3` */
  where: string;
}

/**
 * `NOTIFY_*` names the project and its surroundings use for something other than an option: the
 * test suite's and benchmarks' servers (`NOTIFY_TEST_*`, `NOTIFY_BENCH_*`), `NOTIFY_FUZZ_RUNS`,
 * `NOTIFY_DEBUG` (stack traces from the CLI) and systemd's `NOTIFY_SOCKET` (set for every
 * `Type=notify` service). An option's own name comes first (`NOTIFY_TEST_MODE` is testMode);
 * every other `NOTIFY_*` name must be an option.
 */
export const RESERVED_ENV = /^NOTIFY_(TEST_\w*|BENCH_\w*|FUZZ_RUNS|DEBUG|SOCKET)$/;

export async function readConfigFile(configFile: string | false | undefined, cwd: string): Promise<Layer | undefined> {
  if (configFile === false) return undefined;
  const candidates = configFile ? [resolve(cwd, configFile)] : [resolve(cwd, 'notify.config.json'), resolve(cwd, 'notify.config.js')];
  const path = candidates.find((p) => existsSync(p));
  if (!path) {
    if (configFile) throw new NotifyError('CONFIG_FILE', `Config file ${configFile} does not exist`, { path: configFile });
    return undefined;
  }
  const source = `config file ${path}`;
  let values: unknown;
  try {
    values = path.endsWith('.json') ? JSON.parse(readFileSync(path, 'utf8')) : ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
    if (typeof values !== 'object' || values === null || Array.isArray(values)) throw new Error('it must hold an object of options');
  } catch (err) {
    throw new NotifyError('CONFIG_FILE', `Could not read ${source}: ${(err as Error).message}`, { path }, { cause: err });
  }
  const record = values as Record<string, unknown>;
  return { values: record, sources: Object.fromEntries(Object.keys(record).map((k) => [k, source])) };
}

/** The .env file: `envFile` when given (it must exist), else `.env` in the working folder if there is one. */
export function readEnvFile(envFile: string | false | undefined, cwd: string, options: readonly string[]): Layer | undefined {
  if (envFile === false) return undefined;
  const path = resolve(cwd, envFile || '.env');
  if (!existsSync(path)) {
    if (envFile) throw new NotifyError('CONFIG_FILE', `Env file ${envFile} does not exist (looked for ${path})`, { path });
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new NotifyError('CONFIG_FILE', `Could not read env file ${path}: ${(err as Error).message}`, { path }, { cause: err });
  }
  const settings = parseEnvFile(text, path).map((e) => ({ name: e.name, value: e.value, where: `${e.name} in ${path}:${e.line}` }));
  return settingsLayer(settings, options);
}

/** The process environment (or the `env` given to createNotify()). */
export function readEnvironment(env: Record<string, string | undefined>, options: readonly string[]): Layer {
  const settings: Setting[] = [];
  for (const [name, value] of Object.entries(env)) if (value !== undefined) settings.push({ name, value, where: `environment variable ${name}` });
  return settingsLayer(settings, options);
}

/** `batchSize` -> `NOTIFY_BATCH_SIZE` */
export function envName(option: string): string {
  return `NOTIFY_${option.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/**
 * `notify.<option>` and `NOTIFY_<UPPER_SNAKE>` settings as option values; when one source has both
 * spellings of an option, `notify.<option>` wins. Other names are not ours and are left alone; a
 * `notify.*` or (unreserved) `NOTIFY_*` name that is no option is a typo, and an error naming it.
 */
function settingsLayer(settings: Setting[], options: readonly string[]): Layer {
  const byEnvName = new Map(options.map((o) => [envName(o), o]));
  const layer: Layer = { values: {}, sources: {} };
  const dotted = new Set<string>();
  for (const { name, value, where } of settings) {
    let option: string | undefined;
    if (name.startsWith('notify.')) {
      option = name.slice('notify.'.length);
      if (!options.includes(option)) throw unknown(option, where, closestName(option, options), (o) => `notify.${o}`);
      dotted.add(option);
    } else if (name.startsWith('NOTIFY_')) {
      option = byEnvName.get(name);
      if (!option && RESERVED_ENV.test(name)) continue;
      if (!option) throw unknown(name, where, closestName(name.slice('NOTIFY_'.length), [...byEnvName.keys()].map((n) => n.slice('NOTIFY_'.length))), (n) => `NOTIFY_${n}`);
      if (dotted.has(option)) continue;
    } else continue;
    layer.values[option] = value;
    layer.sources[option] = where;
  }
  return layer;
}

function unknown(name: string, where: string, suggestion: string | undefined, spell: (s: string) => string): NotifyError {
  const hint = suggestion ? `; did you mean ${spell(suggestion)}?` : '';
  return new NotifyError('CONFIG_INVALID', `Unknown option '${name}' (from ${where})${hint}`, { option: name, source: where });
}
