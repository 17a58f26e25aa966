import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';

/**
 * Who reads the log: a library's host application or a service's log collector (JSON lines on
 * stdout, as pino writes them), or a person at a terminal running one CLI command (stderr, so the
 * command's own output on stdout stays clean to pipe or capture).
 */
export type LogAudience = 'service' | 'command';

const LABELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
/** pino's own fields, not worth a person's reading */
const PLUMBING = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'err']);

/**
 * The instance's logger. logFormat `json` or `text` is followed as given; `auto` is JSON for a
 * service and readable lines for a command, unless the command was asked for --json output.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>, audience: LogAudience = 'service', opts: { json?: boolean } = {}): Logger {
  const fd = audience === 'command' ? 2 : 1;
  const text = config.logFormat === 'text' || (config.logFormat === 'auto' && audience === 'command' && !opts.json);
  const options = { level: config.logLevel, name: 'notify' };
  if (!text) return audience === 'command' ? pino(options, pino.destination({ fd, sync: true })) : pino(options);
  const out = fd === 2 ? process.stderr : process.stdout;
  return pino(options, { write: (line: string) => out.write(readable(line)) });
}

/** `warning: adminToken is shorter ... (campaignId: 7)`: the level, the message, the error's message, the other fields. */
export function readable(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const err = entry.err as { message?: string } | undefined;
  const fields = Object.entries(entry)
    .filter(([k, v]) => !PLUMBING.has(k) && v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const level = LABELS[entry.level as number] ?? String(entry.level);
  return `${level}: ${String(entry.msg ?? '')}${err?.message ? `: ${err.message}` : ''}${fields.length > 0 ? ` (${fields.join(', ')})` : ''}\n`;
}
