import type { Kysely } from 'kysely';
import type { OptinRepo } from '../../core/storage/optin.ts';
import type { ContactStatus } from '../../core/types.ts';
import type { Database } from '../schema.ts';

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
