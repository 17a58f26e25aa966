import { linkRef, scopeSignature } from '../../src/core/link-refs.ts';
import { newToken } from '../../src/core/tokens.ts';
import type { Store } from '../../src/store/contract.ts';
import { createStore } from '../../src/store/index.ts';

export const BENCH_SECRET = 'bench-secret-0123456789abcdef0123456789';

export interface SeededSends {
  campaignId: number;
  tokens: string[];
  /** per token, a click path to link 0..links-1 (signed reference) */
  clickPaths: string[];
}

/**
 * Writes `count` contacts, one sent campaign and one `sent` send row per contact, straight into
 * the tables (fast, and independent of the dispatch code being measured elsewhere).
 */
export async function seedSends(url: string, count: number, links = 30): Promise<SeededSends> {
  const store = createStore(url);
  try {
    await store.migrate();
    await store.meta.getOrSet('secret', BENCH_SECRET);
    return await insertRows(store, count, links);
  } finally {
    await store.close();
  }
}

async function insertRows(store: Store, count: number, links: number): Promise<SeededSends> {
  const now = Date.now();
  const { db } = store;
  const campaign = await db
    .insertInto('notify_campaigns')
    .values({ subject: 'Bench', html: '<p>bench</p>', status: 'sent', created_at: now, name: 'bench', markdown: null, markdown_file: null, text: null, layout: null, list_id: null, from_name: null, from_email: null, sent_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const campaignId = campaign.id;
  const scope = `c${campaignId}`;
  await store.links.ensureScope(scope, Array.from({ length: links }, (_, i) => `https://example.com/article/${i}?utm_source=bench`), now);
  const tokens: string[] = [];
  const clickPaths: string[] = [];
  for (let i = 0; i < count; i += 500) {
    const n = Math.min(500, count - i);
    const contacts = await db
      .insertInto('notify_contacts')
      .values(Array.from({ length: n }, (_, j) => ({ email: `bench${i + j}@example.com`, email_key: `bench${i + j}@example.com`, unsubscribe_token: newToken(), attributes: '{}', status: 'subscribed', created_at: now, updated_at: now })))
      .returning('id')
      .execute();
    const rows = contacts.map((c, j) => {
      const token = newToken();
      tokens.push(token);
      clickPaths.push(`/notify/click/${token}?l=${linkRef(scope, (i + j) % links, scopeSignature(BENCH_SECRET, token, scope))}`);
      return { token, campaign_id: campaignId, contact_id: c.id, to_email: `bench${i + j}@example.com`, subject: 'Bench', status: 'sent', created_at: now, updated_at: now, sent_at: now };
    });
    await db.insertInto('notify_sends').values(rows).execute();
  }
  await store.counters.add(new Map([[campaignId, { total: count, sent: count }]]));
  return { campaignId, tokens, clickPaths };
}

/** Rows in notify_events (to check that every answered request was recorded). */
export async function countEvents(url: string, type: string): Promise<number> {
  const store = createStore(url);
  try {
    const row = await store.db.selectFrom('notify_events').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', type).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await store.close();
  }
}

/**
 * Outgoing webhook deliveries written (one per open when webhooksOut takes notify:email.opened),
 * once the worker's step has turned the tracking batches' rows into them (not timed).
 */
export async function countOutbound(url: string): Promise<number> {
  const store = createStore(url);
  try {
    // every batch, also those still waiting for their click labels to settle
    while ((await store.outbound.expandTracking(100, Number.MAX_SAFE_INTEGER)) > 0);
    const row = await store.db.selectFrom('notify_outbound_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await store.close();
  }
}
