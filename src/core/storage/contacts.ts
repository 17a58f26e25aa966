import type { Contact, ContactStatus, RecipientContact } from '../types.ts';

export interface ContactWrite {
  email: string;
  email_key: string;
  name?: string | null;
  attributes?: Record<string, unknown>;
  status?: ContactStatus;
  /** status for a contact created now, when no explicit status is given */
  initialStatus: ContactStatus;
  /** statuses of an existing contact replaced by initialStatus when no explicit status is given */
  lift?: readonly ContactStatus[];
  unsubscribe_token: string;
  lists?: string[];
  consent?: { at: number; source: string | null; ip: string | null };
  /** a double opt-in link that was emailed (hash of its token, when it was sent) */
  confirmation?: { tokenHash: string; at: number };
}

export interface ContactsRepo {
  /**
   * Inserts or updates by email_key, in one transaction; attributes merge, lists are added; the status
   * changes only when given, or when the stored one is in `lift`.
   */
  upsert(input: ContactWrite, now: number): Promise<Contact>;
  getById(id: number): Promise<Contact | undefined>;
  getByEmailKey(emailKey: string): Promise<Contact | undefined>;
  getByUnsubscribeToken(token: string): Promise<Contact | undefined>;
  /** the status the address had when it was erased, if it was erased */
  tombstoneForToken(tokenHash: string): Promise<{ status: string } | undefined>;
  tombstoneForEmail(emailHash: string): Promise<{ status: string } | undefined>;
  setStatus(id: number, status: ContactStatus, now: number): Promise<void>;
  /** sets status unless the contact already has it; true when this call changed it (race-free "first one wins") */
  changeStatus(id: number, status: ContactStatus, now: number): Promise<boolean>;
  /** what delivery needs of several contacts at once (drip runs), by id */
  recipients(ids: number[]): Promise<Map<number, RecipientContact>>;
  /** statuses of the given email keys that exist (suppression check at dispatch) */
  statusesByEmailKey(keys: string[]): Promise<Map<string, { id: number; status: string }>>;
  /** deletes the person's data, keeping only hashes (tombstone) */
  erase(id: number, emailHash: string, now: number): Promise<boolean>;
}
