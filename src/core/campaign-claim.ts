import type { Context } from '../context.ts';
import { newTokens } from './tokens.ts';
import { type Campaign, isSuppressedStatus, type RecipientContact, type SendRecord } from './types.ts';

/** Creates this chunk's rows; only the ones this call inserted are ours to send. None once the campaign is paused or cancelled. */
export async function claim(ctx: Context, campaign: Campaign, members: RecipientContact[]): Promise<SendRecord[] | undefined> {
  const tokens = newTokens(members.length);
  const rows = members.map((m, i) => ({
    token: tokens[i],
    campaign_id: campaign.id,
    contact_id: m.id,
    to_email: m.email,
    subject: campaign.subject,
    status: isSuppressedStatus(m.status) ? ('suppressed' as const) : ('queued' as const),
  }));
  // The rows and the counters that count them commit together: a crash leaves both or neither.
  // The counter upsert comes last, so its row lock is held only for the commit.
  return ctx.store.transaction(async (tx) => {
    if (!(await tx.campaigns.holdSending(campaign.id))) return undefined;
    const mine = await tx.sends.claim(rows, ctx.clock.now());
    if (mine.length > 0) {
      const suppressed = mine.filter((r) => r.status === 'suppressed').length;
      await tx.counters.add(new Map([[campaign.id, { total: mine.length, suppressed }]]));
    }
    return mine;
  });
}
