import { type Kysely, sql } from 'kysely';
import type { ContactsRepo } from '../../core/storage/contacts.ts';
import { hashToken } from '../../core/tokens.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';
import type { Outbox } from '../outbox.ts';
import { contactFilters } from './contacts/filters.ts';
import { contactLookups } from './contacts/lookups.ts';
import { contactUpserts } from './contacts/upserts.ts';
import { eraseEvents, exportPage, forgetSuppressedRecipient, listId, personRows } from './person-data.ts';

/** The contacts repository: its queries live in contacts/ by concern; erasure and export here. */
export function createContactsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): ContactsRepo {
  return {
    ...contactFilters(db, dialect),
    ...contactUpserts(db, dialect, outbox),
    ...contactLookups(db),
    async erase(id, emailHash, now) {
      return db.transaction().execute(async (trx) => {
        // Locks first, the contact and then their sends, so the event writers in flight commit
        // before this reads the events (they hold a KEY SHARE on the contact, or the tracking writer
        // its sends), and those that come later find the person gone (or the sends without them).
        const person = trx.selectFrom('notify_contacts').select(['unsubscribe_token', 'status', 'email']).where('id', '=', id);
        const row = await dialect.lockForDelete(person).executeTakeFirst();
        if (!row) return false;
        await dialect.lockForUpdate(trx.selectFrom('notify_sends').select('id').where('contact_id', '=', id).orderBy('id')).execute();
        // outgoing webhook bodies name the address: those not yet delivered are dropped with the person, and delivered ones are no longer kept
        await trx
          .deleteFrom('notify_outbound_events')
          .where(dialect.position(sql.ref('body'), `"email":${JSON.stringify(row.email)}`), '>', 0)
          .execute();
        await trx
          .insertInto('notify_tombstones')
          .values({ token_hash: hashToken(row.unsubscribe_token), email_hash: emailHash, status: row.status, created_at: now })
          .onConflict((oc) => oc.column('token_hash').doNothing())
          .execute();
        // Sends and events outlive the person for campaign totals, but carry nothing that identifies
        // them: no address, no subject (it may be personalised), no provider error or message id (both
        // can name the address in the provider's logs), no event metadata (an IP, a user agent).
        await eraseEvents(trx, id);
        await trx.updateTable('notify_sends').set({ to_email: '', subject: '', error: null, message_id: null, contact_id: null }).where('contact_id', '=', id).execute();
        await forgetSuppressedRecipient(trx, id);
        // memberships, enrollments and the consent columns go with the row (ON DELETE CASCADE)
        await trx.deleteFrom('notify_contacts').where('id', '=', id).execute();
        return true;
      });
    },
    exportPerson: (id) => personRows(db, id),
    exportPage: (after, limit, filter) => exportPage(db, after, limit, filter),
    listId: (name) => listId(db, name),
  };
}
