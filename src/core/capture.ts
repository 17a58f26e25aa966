import type { Config } from '../config.ts';
import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import type { CaptureInput } from './capture-fields.ts';
import type { ContactsService } from './contacts.ts';
import type { IssuedLink } from './optin.ts';
import type { ConfirmationEmail } from './optin-mail.ts';
import type { Contact, ContactInput, ContactStatus } from './types.ts';

/**
 * What a capture post did. The HTTP layer answers every outcome with the same success response,
 * so a form never reveals whether an address was already known, suppressed or a bot's.
 */
export type CaptureOutcome = 'subscribed' | 'updated' | 'confirmation_sent' | 'unchanged';

export interface CaptureDeps {
  ctx: Pick<Context, 'config' | 'store'>;
  contacts: ContactsService;
  /** emails a double opt-in link and returns it for storing (core/optin.ts); throws when it could not be sent */
  mailConfirmation(to: Omit<ConfirmationEmail, 'url'>): Promise<IssuedLink>;
}

export interface CaptureConsent {
  /** the page the form was on (Referer origin + path), or null */
  source: string | null;
  /** the client IP; stored only when trackIpAddress is true */
  ip: string | null;
}

/**
 * Creates or updates the contact of a capture post:
 * - new address, or one only `transactional` mail went to: `subscribed`, or `pending` plus a
 *   confirmation email when doubleOptIn is on;
 * - known address: lists are added; name and attributes only fill what is empty, because an
 *   unauthenticated post must not overwrite what the person (or the application) stored;
 * - `unsubscribed`: stays unsubscribed and gets a confirmation email, whatever doubleOptIn says:
 *   only a confirmed link lifts it, never the post itself;
 * - `bounced` / `complained`: nothing changes and nothing is sent (only an explicit API call lifts these).
 * A confirmation email goes out before anything is written, and a failed one throws with nothing
 * stored: the person can simply post again, and a link that arrived earlier keeps working.
 */
export async function captureContact(deps: CaptureDeps, raw: CaptureInput, consent: CaptureConsent): Promise<{ outcome: CaptureOutcome; contactId: number }> {
  const { ctx, contacts } = deps;
  const input = keptAttributes(ctx.config, { ...raw, lists: await captureLists(deps.ctx, raw.lists) });
  const existing = await contacts.get(input.email);
  if (existing && (existing.status === 'bounced' || existing.status === 'complained')) return { outcome: 'unchanged', contactId: existing.id };
  const signUp = ctx.config.doubleOptIn ? 'pending' : 'subscribed';
  // Double opt-in switched off since a person signed up: a pending sign-up is then treated as a new one.
  const lift: ContactStatus[] = signUp === 'subscribed' ? ['transactional', 'pending'] : ['transactional'];
  const status = existing ? (lift.includes(existing.status) ? signUp : existing.status) : ((await contacts.rememberedStatus(input.email)) ?? signUp);
  const link =
    status === 'pending' || status === 'unsubscribed'
      ? await deps.mailConfirmation({ to: existing?.email ?? input.email, name: existing?.name ?? input.name ?? null, resubscribe: status === 'unsubscribed' })
      : undefined;
  const contact = await contacts.upsert(existing ? fillOnly(existing, input) : { email: input.email, name: input.name, lists: input.lists, attributes: input.attributes }, {
    initialStatus: signUp,
    lift,
    consent: keepsConsent(existing) ? undefined : { source: consent.source, ip: ctx.config.trackIpAddress ? consent.ip : null },
    confirmation: link,
  });
  return { outcome: outcomeOf(existing, contact, link), contactId: contact.id };
}

/**
 * An anonymous form may join only lists meant for it: created `public: true`, or named in
 * `captureLists` (created on first sign-up when missing). Anything else is refused before
 * anything is stored or sent, and the answer does not say whether the list exists.
 */
export async function captureLists(ctx: Pick<Context, 'config' | 'store'>, lists: string[]): Promise<string[]> {
  const allowed = new Map(ctx.config.captureLists.map((l) => [l.toLowerCase(), l]));
  const out: string[] = [];
  for (const name of lists) {
    const list = await ctx.store.lists.byName(name);
    const named = allowed.get(name.toLowerCase());
    if (!list?.public && !named) throw new NotifyError('INVALID_INPUT', 'This form cannot sign you up to that list.', { field: 'list' });
    // the stored spelling, else the configured one
    out.push(list?.name ?? named!);
  }
  return out;
}

/** With `captureAttributes` set, only those attributes are kept; the rest are dropped silently. */
function keptAttributes(config: Config, input: CaptureInput): CaptureInput {
  if (!config.captureAttributes) return input;
  const keep = new Set(config.captureAttributes);
  return { ...input, attributes: Object.fromEntries(Object.entries(input.attributes).filter(([k]) => keep.has(k))) };
}

/** A post about a known address adds lists and fills empty fields; it never overwrites stored values. */
function fillOnly(existing: Contact, input: CaptureInput): ContactInput {
  return {
    email: existing.email,
    lists: input.lists,
    name: existing.name ? undefined : input.name,
    attributes: Object.fromEntries(Object.entries(input.attributes).filter(([k]) => !(k in existing.attributes))),
  };
}

/** Consent is the latest request while unconfirmed; a subscribed contact keeps the consent it has. */
function keepsConsent(existing: Contact | undefined): boolean {
  return !!existing && (existing.status === 'unsubscribed' || (existing.status === 'subscribed' && !!existing.consent_at));
}

function outcomeOf(existing: Contact | undefined, contact: Contact, link: IssuedLink | undefined): CaptureOutcome {
  if (link) return 'confirmation_sent';
  if (contact.status !== 'subscribed') return 'unchanged';
  return existing?.status === 'subscribed' ? 'updated' : 'subscribed';
}
