import { NotifyError } from '../errors.ts';
import { emailKey, normalizeEmail } from './email.ts';
import type { IssuedLink } from './optin.ts';
import type { ContactWrite } from './storage/contacts.ts';
import { newToken } from './tokens.ts';
import { CONTACT_STATUSES, type ContactInput, type ContactStatus } from './types.ts';

const MAX_ATTRIBUTES_BYTES = 16 * 1024;
const MAX_NAME = 200;

/** What a caller inside notify may add to an upsert (the public API passes none of these). */
export interface UpsertOptions {
  consent?: { source: string | null; ip: string | null };
  /**
   * Status of a contact created now when the input gives none (default `subscribed`; an erased
   * address that had opted out comes back with that opt-out instead). It also replaces a status
   * listed in `lift` on an existing contact.
   */
  initialStatus?: 'subscribed' | 'pending' | 'transactional';
  /**
   * Statuses of an existing contact this write replaces by `initialStatus` when the input gives no
   * status. Default `transactional`: a contact notify.send() created is not anyone's subscriber yet,
   * so an upsert (API, import, capture) makes it what that upsert would have made of a new address.
   */
  lift?: readonly ContactStatus[];
  /** a double opt-in link that was emailed: stored with the contact, replacing any earlier one */
  confirmation?: IssuedLink;
}

const LIFTED_BY_DEFAULT: readonly ContactStatus[] = ['transactional'];


/** The row an upsert writes, from checked input; `remembered` is the opt-out an erased address had. */
export function toWrite(email: string, input: ContactInput, options: UpsertOptions, remembered: ContactStatus | undefined, now: number): ContactWrite {
  return {
    email,
    email_key: emailKey(email),
    name: input.name,
    attributes: input.attributes,
    status: input.status,
    initialStatus: remembered ?? options.initialStatus ?? 'subscribed',
    lift: options.lift ?? LIFTED_BY_DEFAULT,
    unsubscribe_token: newToken(),
    lists: input.lists,
    consent: options.consent ? { at: now, ...options.consent } : undefined,
    confirmation: options.confirmation,
  };
}

/** What upsert() refuses (INVALID_EMAIL, INVALID_INPUT), checked without writing; the trimmed address. */
export function checkContactInput(input: ContactInput): string {
  const email = normalizeEmail(input?.email);
  validateInput(input);
  return email;
}

function validateInput(input: ContactInput): void {
  if (input.name != null && (typeof input.name !== 'string' || input.name.length > MAX_NAME || /[\r\n]/.test(input.name))) {
    throw new NotifyError('INVALID_INPUT', `Contact name must be a single line of at most ${MAX_NAME} characters`, { field: 'name' });
  }
  if (input.status !== undefined && !(CONTACT_STATUSES as readonly string[]).includes(input.status)) {
    throw new NotifyError('INVALID_INPUT', `Contact status must be one of ${CONTACT_STATUSES.join(', ')}`, { field: 'status' });
  }
  if (input.lists !== undefined && (!Array.isArray(input.lists) || input.lists.some((l) => typeof l !== 'string' || l.length === 0 || l.length > 100))) {
    throw new NotifyError('INVALID_INPUT', 'Contact lists must be names of 1 to 100 characters', { field: 'lists' });
  }
  if (input.attributes !== undefined) {
    if (typeof input.attributes !== 'object' || input.attributes === null || Array.isArray(input.attributes)) {
      throw new NotifyError('INVALID_INPUT', 'Contact attributes must be an object', { field: 'attributes' });
    }
    if (JSON.stringify(input.attributes).length > MAX_ATTRIBUTES_BYTES) {
      throw new NotifyError('INVALID_INPUT', `Contact attributes must be under ${MAX_ATTRIBUTES_BYTES} bytes of JSON`, { field: 'attributes' });
    }
  }
}
