import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

export interface WebhookReceiptsRepo {
  /**
   * Records each id not yet received from `provider` and returns those: they are the caller's to
   * apply. Run inside the transaction that applies them, so a receipt exists exactly when its
   * effects do; of two concurrent deliveries of one id, one gets it (the primary key decides).
   */
  claim(provider: string, ids: string[], now: number): Promise<Set<string>>;
}

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
