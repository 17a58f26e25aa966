import type { ContactStatus } from '../types.ts';

export interface PendingConfirmation {
  contactId: number;
  status: ContactStatus;
  sentAt: number | null;
}

/**
 * Double opt-in links: only the hash of a link's token is stored (notify_contacts.confirm_token_hash).
 * A link is stored with the contact's write (ContactsRepo.upsert), once its email has left.
 */
export interface OptinRepo {
  find(tokenHash: string): Promise<PendingConfirmation | undefined>;
  /**
   * Atomically: when the link is still the contact's and the status is one of `from`, set `subscribed`,
   * clear the link and record the confirmation as the consent. False when someone else got there first.
   */
  confirm(contactId: number, tokenHash: string, from: ContactStatus[], consent: { at: number; ip: string | null }): Promise<boolean>;
}
