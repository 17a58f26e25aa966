import { trackingHost } from '../config.ts';
import type { Context } from '../context.ts';
import type { Views } from '../render/views.ts';
import type { ConfirmationEmail, SendConfirmation } from './optin-mail.ts';
import { hashToken, isWellFormedToken, newToken } from './tokens.ts';
import type { ContactStatus } from './types.ts';

/** A confirmation link works for a week; later, signing up again sends a fresh one. */
export const CONFIRM_TTL_MS = 7 * 24 * 60 * 60_000;

/** Statuses a confirmed link lifts to `subscribed`: awaiting confirmation, or re-subscribing after an unsubscribe. */
const CONFIRMABLE: ContactStatus[] = ['pending', 'unsubscribed'];

export type LinkState = 'valid' | 'invalid' | 'expired';

/** A link that was emailed: what the contact's row must hold for it to work (only the token's hash). */
export interface IssuedLink {
  tokenHash: string;
  at: number;
}

export interface Optin {
  /**
   * Emails a new link and returns it; stores nothing. The caller stores it with the contact
   * (replacing any earlier link) only once the email has left, so a failed email leaves no trace and
   * an earlier link that did arrive keeps working.
   */
  mailConfirmation(to: Omit<ConfirmationEmail, 'url'>): Promise<IssuedLink>;
  /** what a GET of the link shows; never changes anything (mail scanners follow links) */
  inspect(token: string): Promise<LinkState>;
  /** the POST of the confirm page: `subscribed`, consent recorded as now (and the IP when trackIpAddress) */
  confirm(token: string, ip: string | null): Promise<Exclude<LinkState, 'valid'> | 'confirmed'>;
}

export function createOptin(ctx: Pick<Context, 'store' | 'clock' | 'config'>, views: Views, send: SendConfirmation): Optin {
  const lookup = async (token: string) => {
    if (!isWellFormedToken(token)) return { state: 'invalid' as const };
    const found = await ctx.store.optin.find(hashToken(token));
    if (!found || !CONFIRMABLE.includes(found.status)) return { state: 'invalid' as const };
    if (found.sentAt === null || ctx.clock.now() - found.sentAt > CONFIRM_TTL_MS) return { state: 'expired' as const };
    return { state: 'valid' as const, found };
  };
  return {
    async mailConfirmation(to) {
      const token = newToken();
      const at = ctx.clock.now();
      await send({ ...to, url: `${trackingHost(ctx.config)}/notify/confirm/${token}` }, views);
      return { tokenHash: hashToken(token), at };
    },
    async inspect(token) {
      return (await lookup(token)).state;
    },
    async confirm(token, ip) {
      const hit = await lookup(token);
      if (hit.state !== 'valid') return hit.state;
      const ok = await ctx.store.optin.confirm(hit.found.contactId, hashToken(token), CONFIRMABLE, {
        at: ctx.clock.now(),
        ip: ctx.config.trackIpAddress ? ip : null,
      });
      return ok ? 'confirmed' : 'invalid';
    },
  };
}
