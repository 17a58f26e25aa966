import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createNotify } from '../../../src/notify.ts';
import { createStore } from '../../../src/store/index.ts';
import type { SmtpSink } from '../../helpers/smtp-sink.ts';

export const LIST = 'rel';
export const HTML = '<h1>Hello {{ contact.name }}</h1><p><a href="https://example.com/a">A</a> <a href="https://example.com/b">B</a></p><p><a href="{notify_unsubscribe_url}">Unsubscribe</a></p>{notify_tracking_pixel}';

/**
 * `n` contacts on one list and a campaign to that list, written through the public API.
 */
export async function seedCampaign(url: string, n: number): Promise<{ campaignId: number; emails: string[] }> {
  const notify = await createNotify({ database: url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com' });
  try {
    const emails = Array.from({ length: n }, (_, i) => `rel${i}@example.com`);
    for (let i = 0; i < n; i += 16) await Promise.all(emails.slice(i, i + 16).map((email, j) => notify.contacts.upsert({ email, name: `R${i + j}`, lists: [LIST] })));
    const campaign = await notify.campaigns.create({ subject: 'Reliability', html: HTML, list: LIST });
    return { campaignId: campaign.id, emails };
  } finally {
    await notify.close();
  }
}

export interface SendRowCounts {
  [status: string]: number;
}

export async function sendStatuses(url: string, campaignId: number): Promise<SendRowCounts> {
  const store = createStore(url);
  try {
    const rows = await store.db.selectFrom('notify_sends').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('campaign_id', '=', campaignId).groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  } finally {
    await store.close();
  }
}

export async function campaignStatus(url: string, campaignId: number): Promise<string | undefined> {
  const store = createStore(url);
  try {
    return (await store.db.selectFrom('notify_campaigns').select('status').where('id', '=', campaignId).executeTakeFirst())?.status;
  } finally {
    await store.close();
  }
}

/** Moves rows left `sending` back in time, as if `minutes` had passed since the crash. */
export async function ageSendingRows(url: string, campaignId: number, minutes: number): Promise<number> {
  const store = createStore(url);
  try {
    const r = await sql`update notify_sends set updated_at = updated_at - ${minutes * 60_000}, created_at = created_at - ${minutes * 60_000}
      where campaign_id = ${campaignId} and status in ('queued', 'sending')`.execute(store.db);
    return Number(r.numAffectedRows ?? 0);
  } finally {
    await store.close();
  }
}

/**
 * The at-most-once invariant after crashes and reruns: nobody got two messages; every contact
 * got exactly one message or has one recorded failure; a `sent` row was delivered exactly once;
 * nothing is left in flight; the counters behind getCampaignStats agree with the rows.
 */
export async function assertExactlyOnceOrFailed(url: string, campaignId: number, emails: string[], sink: SmtpSink): Promise<{ sent: number; failed: number; delivered: number }> {
  const perRecipient = new Map<string, number>();
  for (const m of sink.messages) for (const to of m.envelope.to) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
  const dupes = [...perRecipient].filter(([, n]) => n > 1);
  assert.deepEqual(dupes, [], 'no recipient got two messages');
  const store = createStore(url);
  try {
    const rows = await store.db.selectFrom('notify_sends').select(['to_email', 'status', 'error']).where('campaign_id', '=', campaignId).execute();
    assert.equal(rows.length, emails.length, 'one send row per contact');
    const byEmail = new Map(rows.map((r) => [r.to_email, r]));
    for (const email of emails) {
      const row = byEmail.get(email);
      assert.ok(row, `${email} has a send row`);
      assert.ok(['sent', 'failed'].includes(row.status), `${email} is ${row.status}, not sent or failed`);
      if (row.status === 'sent') assert.equal(perRecipient.get(email), 1, `${email} is sent and was delivered once`);
    }
    const sent = rows.filter((r) => r.status === 'sent').length;
    const failed = rows.filter((r) => r.status === 'failed').length;
    const notify = await createNotify({ database: url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log', migrate: false });
    try {
      assert.deepEqual(await notify.campaigns.getCampaignStats(campaignId), { total: emails.length, sent, failed, opened: 0, clicked: 0 }, 'counters agree with the rows');
    } finally {
      await notify.close();
    }
    return { sent, failed, delivered: perRecipient.size };
  } finally {
    await store.close();
  }
}
