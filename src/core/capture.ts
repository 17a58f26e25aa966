import type { Context } from '../context.ts';
import type { CaptureInput } from './capture-fields.ts';
import type { ContactsService } from './contacts.ts';
import type { Contact } from './types.ts';

/**
 * What a capture post did. The HTTP layer answers every outcome with the same success response,
 * so a form never reveals whether an address was already known, suppressed or a bot's.
 */
export type CaptureOutcome = 'subscribed' | 'updated' | 'confirmation_sent' | 'unchanged';

export interface CaptureDeps {
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'log'>;
  contacts: ContactsService;
  /** issues a double opt-in link and emails it (core/optin.ts) */
  requestConfirmation(contact: Contact): Promise<void>;
}

export interface CaptureConsent {
  /** the page the form was on (Referer origin + path), or null */
  source: string | null;
  /** the client IP; stored only when trackIpAddress is true */
  ip: string | null;
}

/**
 * Creates or updates the contact of a capture post (DESIGN.md section 4):
 * - new address: `subscribed`, or `pending` plus a confirmation email when doubleOptIn is on;
 * - known address: lists are added; name and attributes only fill what is empty, because an
 *   unauthenticated post must not overwrite what the person (or the application) stored;
 * - `unsubscribed`: stays unsubscribed and gets a confirmation email, whatever doubleOptIn says:
 *   only a confirmed link lifts it, never the post itself;
 * - `bounced` / `complained`: nothing changes and nothing is sent (only an explicit API call lifts these).
 */
export async function captureContact(deps: CaptureDeps, input: CaptureInput, consent: CaptureConsent): Promise<{ outcome: CaptureOutcome; contactId: number }> {
  const { ctx, contacts } = deps;
  const record = { source: consent.source, ip: ctx.config.trackIpAddress ? consent.ip : null };
  const existing = await contacts.get(input.email);
  if (!existing) {
    const initialStatus = ctx.config.doubleOptIn ? 'pending' : 'subscribed';
    const contact = await contacts.upsert({ email: input.email, name: input.name, lists: input.lists, attributes: input.attributes }, { consent: record, initialStatus });
    // An erased address that had opted out comes back with its old status (contacts.upsert).
    return settle(deps, contact, contact.status === 'subscribed' ? 'subscribed' : undefined);
  }
  if (existing.status === 'bounced' || existing.status === 'complained') return { outcome: 'unchanged', contactId: existing.id };
  const fill = {
    email: existing.email,
    lists: input.lists,
    name: existing.name ? undefined : input.name,
    attributes: Object.fromEntries(Object.entries(input.attributes).filter(([k]) => !(k in existing.attributes))),
  };
  // Consent is the latest request while unconfirmed; a subscribed contact keeps the consent it has.
  const keepConsent = existing.status === 'unsubscribed' || (existing.status === 'subscribed' && existing.consent_at);
  const contact = await contacts.upsert(fill, keepConsent ? {} : { consent: record });
  if (contact.status === 'pending' && !ctx.config.doubleOptIn) {
    // Double opt-in was switched off since this person signed up: treat them as a new sign-up would be.
    await ctx.store.contacts.setStatus(contact.id, 'subscribed', ctx.clock.now());
    return { outcome: 'subscribed', contactId: contact.id };
  }
  return settle(deps, contact, 'updated');
}

async function settle(deps: CaptureDeps, contact: Contact, done: CaptureOutcome | undefined): Promise<{ outcome: CaptureOutcome; contactId: number }> {
  if (contact.status === 'pending' || contact.status === 'unsubscribed') {
    await deps.requestConfirmation(contact);
    return { outcome: 'confirmation_sent', contactId: contact.id };
  }
  return { outcome: done ?? 'unchanged', contactId: contact.id };
}
