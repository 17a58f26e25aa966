import type { Context } from '../context.ts';
import { whereToSet } from '../config.ts';
import { isNotifyError, NotifyError } from '../errors.ts';
import type { Views } from '../render/views.ts';
import { formatFrom } from './headers.ts';
import { listHeaders } from './list-headers.ts';
import type { Mailer } from './mailer.ts';
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
 * Sends the double opt-in email through the instance's mailer (whatever the `mailer` option names; in
 * testMode that mailer logs instead of sending). It deliberately skips the campaign dispatcher's
 * suppression check: a person who unsubscribed and asks to come back must get this one email, and it
 * carries no tracking. The body is the view `notify/emails/subscribe_confirm` (overridable).
 * Throws MAILER_FAILED when the mailer threw or refused, MISSING_SENDER / CONFIG_INVALID when no
 * usable from address is configured.
 */
export function createConfirmationSender(ctx: Pick<Context, 'config' | 'mailer'>): SendConfirmation {
  return async (email, views) => {
    const subject = email.resubscribe ? 'Confirm that you want to subscribe again' : 'Please confirm your subscription';
    const from = sender(ctx.config);
    const data = { url: email.url, name: email.name ?? '', email: email.to, resubscribe: email.resubscribe, subject };
    const html = await views.render('notify/emails/subscribe_confirm', data);
    const text = await views.render('notify/emails/subscribe_confirm_text', data);
    let result: Awaited<ReturnType<Mailer['send']>>;
    try {
      result = await ctx.mailer.send({ from, to: [email.to], subject, html, text, headers: listHeaders(ctx.config, { kind: 'optin' }), sendToken: newToken() });
    } catch (err) {
      throw new NotifyError('MAILER_FAILED', `Confirmation email to ${email.to} failed: ${(err as Error).message}`, {}, { cause: err });
    }
    if (result === false) throw new NotifyError('MAILER_FAILED', `Confirmation email to ${email.to} was refused by the mailer`);
  };
}

/** The configured From; a bad one is the operator's configuration, never the person signing up. */
function sender(config: Pick<Context['config'], 'fromName' | 'fromEmail'>): string {
  try {
    return formatFrom(config.fromName, config.fromEmail).header;
  } catch (err) {
    if (isNotifyError(err, 'MISSING_SENDER')) throw new NotifyError('MISSING_SENDER', `Double opt-in needs a from address: set the fromEmail option (${whereToSet('fromEmail')})`);
    throw new NotifyError('CONFIG_INVALID', `Double opt-in cannot send: ${(err as Error).message}`, { option: 'fromEmail' }, { cause: err });
  }
}
