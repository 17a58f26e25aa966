import type { Kysely } from 'kysely';
import type { ContactStatus } from '../../core/types.ts';
import type { Database } from '../schema.ts';

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

export function createOptinRepo(db: Kysely<Database>): OptinRepo {
  return {
    async find(tokenHash) {
      const row = await db
        .selectFrom('notify_contacts')
        .select(['id', 'status', 'confirm_sent_at'])
        .where('confirm_token_hash', '=', tokenHash)
        .executeTakeFirst();
      return row && { contactId: Number(row.id), status: row.status as ContactStatus, sentAt: row.confirm_sent_at === null ? null : Number(row.confirm_sent_at) };
    },
    async confirm(contactId, tokenHash, from, consent) {
      const result = await db
        .updateTable('notify_contacts')
        .set({ status: 'subscribed', confirm_token_hash: null, confirm_sent_at: null, consent_at: consent.at, consent_ip: consent.ip, updated_at: consent.at })
        .where('id', '=', contactId)
        .where('confirm_token_hash', '=', tokenHash)
        .where('status', 'in', from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
