import type { Kysely } from 'kysely';
import type { OutboundEvent } from '../../core/storage/outbound.ts';
import type { OptinRepo } from '../../core/storage/optin.ts';
import type { ContactStatus } from '../../core/types.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { recordJoins } from './joins.ts';

export function createOptinRepo(db: Kysely<Database>, outbox: Outbox): OptinRepo {
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
      // The confirmation is the join that counts for the lists the person signed up to: their
      // triggered sequences start and the events are written with it, or not at all.
      const events = await db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('notify_contacts')
          .set({ status: 'subscribed', confirm_token_hash: null, confirm_sent_at: null, consent_at: consent.at, consent_ip: consent.ip, updated_at: consent.at })
          .where('id', '=', contactId)
          .where('confirm_token_hash', '=', tokenHash)
          .where('status', 'in', from)
          .returning('email')
          .executeTakeFirst();
        if (!row) return undefined;
        const out: OutboundEvent[] = [];
        if (outbox.wants('notify:contact.confirmed')) {
          const confirmed: OutboundEvent = { type: 'notify:contact.confirmed', data: { contact: { id: contactId, email: row.email } } };
          await outbox.write(trx, [confirmed], consent.at);
          out.push(confirmed);
        }
        const lists = await trx.selectFrom('notify_list_members').select('list_id').where('contact_id', '=', contactId).where('status', '=', 'subscribed').execute();
        out.push(...(await recordJoins(trx, outbox, lists.map((l) => ({ contactId, listId: Number(l.list_id) })), consent.at)));
        return out;
      });
      if (!events) return false;
      outbox.publish(events);
      return true;
    },
  };
}
