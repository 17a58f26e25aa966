import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Mailer } from './contract.ts';
import { withDeliverability } from './deliverability.ts';
import { createLogMailer } from './log.ts';
import { mailTransports, type TransportDeps } from './registry.ts';

export type { Mailer, MailResult, OutgoingMessage } from './contract.ts';
export { mailTransports, type TransportDeps } from './registry.ts';

/**
 * The mailer the `mailer` option names: a Mailer object as it is, or a transport of the registry.
 * testMode wins over everything: the configured mailer is not even built, so a test run cannot
 * reach a real server.
 */
export function createMailer(config: MailerConfig, log: Logger, opts: Omit<TransportDeps, 'log'> = {}): Mailer {
  return withDeliverability(transportFor(config, log, opts), { bounceDomain: config.bounceDomain || undefined, dkim: config.dkim });
}

type MailerConfig = Pick<Config, 'mailer' | 'testMode'> & Partial<Pick<Config, 'smtpName' | 'bounceMailbox' | 'bounceDomain' | 'dkim'>>;

function transportFor(config: MailerConfig, log: Logger, opts: Omit<TransportDeps, 'log'>): Mailer {
  if (config.testMode) return createLogMailer(log, 'testMode');
  const spec = config.mailer;
  if (typeof spec === 'object') return spec as Mailer;
  return mailTransports.create(spec, { ...opts, log, smtpName: config.smtpName || undefined });
}
