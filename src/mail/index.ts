import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Mailer } from './contract.ts';
import { createLogMailer } from './log.ts';
import { createOutboxMailer } from './outbox.ts';
import { createSesMailer, sesOptionsFromEnv } from './ses.ts';
import { createSmtpMailer } from './smtp.ts';

export type { Mailer, MailResult, OutgoingMessage } from './contract.ts';

/**
 * The mailer the `mailer` option names. testMode wins over everything: the configured mailer is not
 * even built, so a test run cannot reach a real server.
 */
export function createMailer(config: Pick<Config, 'mailer' | 'testMode'>, log: Logger, opts: { fetch?: typeof fetch; cwd?: string } = {}): Mailer {
  if (config.testMode) return createLogMailer(log, 'testMode');
  const spec = config.mailer;
  if (typeof spec === 'object') return spec as Mailer;
  if (spec === 'log') return createLogMailer(log);
  if (spec === 'ses') return createSesMailer(sesOptionsFromEnv(process.env, opts.fetch));
  if (spec.startsWith('outbox:')) return createOutboxMailer(spec.slice('outbox:'.length), opts.cwd);
  return createSmtpMailer(spec);
}
