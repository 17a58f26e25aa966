import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { emailKey, isValidEmail, normalizeEmail } from './email.ts';
import { hashToken, newToken } from './tokens.ts';
import { CONTACT_STATUSES, type Contact, type ContactInput, isSuppressedStatus } from './types.ts';

const MAX_ATTRIBUTES_BYTES = 16 * 1024;
const MAX_NAME = 200;

export interface ContactsService {
  upsert(input: ContactInput, extra?: { consent?: { source: string | null; ip: string | null }; initialStatus?: 'subscribed' | 'pending' }): Promise<Contact>;
  get(idOrEmail: number | string): Promise<Contact | undefined>;
  erase(idOrEmail: number | string): Promise<boolean>;
}

export function createContactsService(ctx: Pick<Context, 'store' | 'clock'>): ContactsService {
  const { store, clock } = ctx;
  const get = async (idOrEmail: number | string) => {
    if (typeof idOrEmail === 'number' || /^[0-9]+$/.test(String(idOrEmail))) return store.contacts.getById(Number(idOrEmail));
    if (!isValidEmail(String(idOrEmail).trim())) return undefined;
    return store.contacts.getByEmailKey(emailKey(String(idOrEmail)));
  };
  return {
    async upsert(input, extra = {}) {
      const email = normalizeEmail(input?.email);
      validateInput(input);
      const key = emailKey(email);
      // An erased address that had opted out stays opted out if it comes back without an explicit status.
      const tomb = input.status ? undefined : await store.contacts.tombstoneForEmail(hashToken(key));
      const remembered = tomb && isSuppressedStatus(tomb.status) ? (tomb.status as Contact['status']) : undefined;
      const now = clock.now();
      return store.contacts.upsert(
        {
          email,
          email_key: key,
          name: input.name,
          attributes: input.attributes,
          status: input.status,
          initialStatus: remembered ?? extra.initialStatus ?? 'subscribed',
          unsubscribe_token: newToken(),
          lists: input.lists,
          consent: extra.consent ? { at: now, ...extra.consent } : undefined,
        },
        now,
      );
    },
    get,
    async erase(idOrEmail) {
      const contact = await get(idOrEmail);
      if (!contact) return false;
      return store.contacts.erase(contact.id, hashToken(emailKey(contact.email)), clock.now());
    },
  };
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
