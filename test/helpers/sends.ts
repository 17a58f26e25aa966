import { linkRef, scopeSignature } from '../../src/core/link-refs.ts';
import { newToken } from '../../src/core/tokens.ts';
import type { Notify } from '../../src/notify.ts';
import type { Store } from '../../src/store/contract.ts';
import { parseJson } from '../../src/store/rows.ts';

/**
 * Send rows for HTTP tests, written straight into the store until campaign dispatch exists:
 * a campaign (optional), a contact and one `sent` send with its token.
 */
export interface TestSend {
  id: number;
  token: string;
  campaignId: number | null;
  contactId: number;
  unsubscribeToken: string;
}

export async function insertCampaign(store: Store, subject = 'Hello'): Promise<number> {
  const row = await store.db
    .insertInto('notify_campaigns')
    .values({ subject, status: 'sent', created_at: Date.UTC(2026, 0, 1) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function insertSend(notify: Notify, opts: { email?: string; campaignId?: number | null; sentAt?: number } = {}): Promise<TestSend> {
  const store = notify.context.store;
  const email = opts.email ?? `r${newToken().slice(0, 8).toLowerCase()}@example.com`;
  const contact = await notify.contacts.upsert({ email });
  const now = notify.context.clock.now();
  const token = newToken();
  const row = await store.db
    .insertInto('notify_sends')
    .values({
      token,
      campaign_id: opts.campaignId ?? null,
      contact_id: contact.id,
      to_email: email,
      subject: 'Hello',
      status: 'sent',
      created_at: now,
      updated_at: now,
      sent_at: opts.sentAt ?? now - 3_600_000,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), token, campaignId: opts.campaignId ?? null, contactId: contact.id, unsubscribeToken: contact.unsubscribe_token };
}

/** The click path a rendered email would carry for link `index` of `scope`. */
export function clickPath(notify: Notify, token: string, scope: string, index: number): string {
  return `/notify/click/${token}?l=${linkRef(scope, index, scopeSignature(notify.context.secret, token, scope))}`;
}

export async function sendRow(store: Store, id: number) {
  return store.db.selectFrom('notify_sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function eventsOf(store: Store, sendId: number, type?: string) {
  let q = store.db.selectFrom('notify_events').selectAll().where('send_id', '=', sendId);
  if (type) q = q.where('type', '=', type);
  const rows = await q.orderBy('id').execute();
  return rows.map((r) => ({ ...r, metadata: parseJson(r.metadata), is_machine: Number(r.is_machine), link_index: r.link_index === null ? null : Number(r.link_index) }));
}
