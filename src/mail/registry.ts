import type { Logger } from 'pino';
import { Registry } from '../registry.ts';
import type { Mailer } from './contract.ts';
import { createLogMailer } from './log.ts';
import { createOutboxMailer } from './outbox.ts';
import { createSesMailer, sesOptionsFromEnv } from './ses.ts';
import { createSmtpMailer } from './smtp.ts';

/** What a transport may need besides its option string. */
export interface TransportDeps {
  log: Logger;
  /** for HTTP-API transports (SES); default the global fetch */
  fetch?: typeof fetch;
  /** folder a relative outbox path is resolved from */
  cwd?: string;
  /** where credentials are read from (SES: AWS_*); default process.env */
  env?: Record<string, string | undefined>;
  /** the EHLO name of SMTP connections (option smtpName) */
  smtpName?: string;
}

const url = /^\/\/\S+$/;

/**
 * The mail transports the `mailer` option can name. A transport is added with one `register` call:
 * the option's validation and its error message follow from this list.
 */
export const mailTransports = new Registry<TransportDeps, Mailer>('mailer')
  .register('smtp', { usage: 'smtp://...', argument: url, create: (spec, d) => createSmtpMailer(spec, d) })
  .register('smtps', { usage: 'smtps://...', argument: url, create: (spec, d) => createSmtpMailer(spec, d) })
  .register('ses', { usage: 'ses', create: (_, d) => createSesMailer(sesOptionsFromEnv(d.env ?? process.env, d.fetch)) })
  .register('outbox', { usage: 'outbox:<dir>', argument: /^./, create: (spec, d) => createOutboxMailer(spec.slice('outbox:'.length), d.cwd) })
  .register('log', { usage: 'log', create: (_, d) => createLogMailer(d.log) });
