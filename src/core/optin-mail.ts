import type { Context } from '../context.ts';
import { whereToSet } from '../config.ts';
import { NotifyError } from '../errors.ts';
import type { Mailer } from '../mail/contract.ts';
import type { Views } from '../render/views.ts';
import { newToken } from './tokens.ts';

export interface ConfirmationEmail {
  to: string;
  name: string | null;
  url: string;
  /** the address had unsubscribed and asks to come back */
  resubscribe: boolean;
}

export type SendConfirmation = (email: ConfirmationEmail, views: Views) => Promise<void>;

/**
 * Sends the double opt-in email straight through the mailer. It deliberately skips the campaign
 * dispatcher's suppression check: a person who unsubscribed and asks to come back must get this one
 * email, and it carries no tracking. The body is the view `notify/emails/subscribe_confirm` (overridable).
 */
export function createConfirmationSender(ctx: Pick<Context, 'config' | 'log'>, mailer: () => Mailer | undefined): SendConfirmation {
  return async (email, views) => {
    const subject = email.resubscribe ? 'Confirm that you want to subscribe again' : 'Please confirm your subscription';
    const data = { url: email.url, name: email.name ?? '', email: email.to, resubscribe: email.resubscribe, subject };
    const html = await views.render('notify/emails/subscribe_confirm', data);
    const text = await views.render('notify/emails/subscribe_confirm_text', data);
    const transport = mailer();
    if (!transport) {
      // testMode, or a mailer this build cannot open yet: the would-be send is logged, as for every email.
      ctx.log.info({ to: email.to, subject, confirmUrl: email.url }, 'double opt-in email (not sent: testMode or no mailer)');
      return;
    }
    const from = formatFrom(ctx.config.fromName, ctx.config.fromEmail);
    let result: Awaited<ReturnType<Mailer['send']>>;
    try {
      result = await transport.send({ from, to: [email.to], subject, html, text, headers: {}, sendToken: newToken() });
    } catch (err) {
      throw new NotifyError('MAILER_FAILED', `Confirmation email to ${email.to} failed: ${(err as Error).message}`, {}, { cause: err });
    }
    if (result === false) throw new NotifyError('MAILER_FAILED', `Confirmation email to ${email.to} was refused by the mailer`);
  };
}

function formatFrom(name: string, address: string): string {
  if (!address) throw new NotifyError('MISSING_SENDER', `Double opt-in needs a from address: set the fromEmail option (${whereToSet('fromEmail')})`);
  if (/[\r\n]/.test(name + address)) throw new NotifyError('HEADER_INJECTION', 'fromName or fromEmail contains CR or LF');
  return name ? `"${name.replace(/["\\]/g, '\\$&')}" <${address}>` : address;
}
