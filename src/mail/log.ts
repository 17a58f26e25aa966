import type { Logger } from 'pino';
import type { Mailer } from './contract.ts';

/**
 * testMode and `mailer: 'log'`: nothing leaves the process; each would-be send is logged with its
 * recipients, subject and send token.
 */
export function createLogMailer(log: Logger, name = 'log'): Mailer {
  return {
    name,
    async send(m) {
      log.info({ to: m.to, cc: m.cc ?? [], bcc: m.bcc ?? [], subject: m.subject, sendToken: m.sendToken, mailer: name }, 'would send (not delivered)');
      return { messageId: m.messageId };
    },
  };
}
