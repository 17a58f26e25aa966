import type { Kysely } from 'kysely';
import type { WebhookReceiptsRepo } from '../../core/storage/webhook-receipts.ts';
import type { Database } from '../schema.ts';

export function createWebhookReceiptsRepo(db: Kysely<Database>): WebhookReceiptsRepo {
  return {
    async claim(provider, ids, now) {
      const unique = [...new Set(ids)];
      const fresh = new Set<string>();
      for (let i = 0; i < unique.length; i += 500) {
        const rows = await db
          .insertInto('notify_webhook_receipts')
          .values(unique.slice(i, i + 500).map((message_id) => ({ provider, message_id, created_at: now })))
          .onConflict((oc) => oc.columns(['provider', 'message_id']).doNothing())
          .returning('message_id')
          .execute();
        for (const r of rows) fresh.add(r.message_id);
      }
      return fresh;
    },
  };
}
