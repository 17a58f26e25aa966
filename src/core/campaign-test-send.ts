import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { specOf } from './campaign-start.ts';
import { createDeliveryRun, type DeliveryJob } from './delivery.ts';
import { emailKey, normalizeEmail } from './email.ts';
import { newToken } from './tokens.ts';
import type { Campaign, RecipientContact } from './types.ts';

export interface TestSendInput {
  to: string[];
}

export interface TestSendResult {
  sent: string[];
  failed: { to: string; error: string }[];
}

const MAX_TEST_RECIPIENTS = 20;

/**
 * Real copies of the campaign as its audience gets them (layout, Liquid with the address's contact
 * when there is one, tracked links that redirect), through the one delivery loop. Each copy has a
 * token of its own with no send row behind it, so its opens and clicks count nowhere, and its
 * unsubscribe link (a token no contact has) unsubscribes nobody. No row, counter or status changes.
 */
export async function sendTestCopies(ctx: Context, campaign: Campaign, input: TestSendInput): Promise<TestSendResult> {
  const to = recipients(input);
  const message = await ctx.dispatcher.prepare(`c${campaign.id}`, specOf(campaign, ctx.config));
  const jobs: DeliveryJob[] = [];
  for (const address of to) {
    const known = await ctx.store.contacts.getByEmailKey(emailKey(address));
    const contact: RecipientContact = { id: known?.id ?? 0, email: address, name: known?.name ?? null, attributes: known?.attributes ?? {}, unsubscribe_token: newToken(), status: 'subscribed' };
    jobs.push({ message, send: { id: 0, token: newToken() }, contact });
  }
  const outcomes = await createDeliveryRun(ctx, { record: async () => {} }).send(jobs);
  const result: TestSendResult = { sent: [], failed: [] };
  outcomes.forEach((o, i) => {
    if (o.status === 'sent') result.sent.push(to[i]);
    else result.failed.push({ to: to[i], error: o.error ?? o.status });
  });
  ctx.log.info({ campaignId: campaign.id, sent: result.sent, failed: result.failed }, 'test copies sent (not counted)');
  return result;
}

function recipients(input: TestSendInput): string[] {
  const to = typeof input === 'object' && input !== null ? input.to : undefined;
  if (!Array.isArray(to) || to.length === 0 || to.length > MAX_TEST_RECIPIENTS) {
    throw new NotifyError('INVALID_INPUT', `sendTest needs { to: [...] } with 1 to ${MAX_TEST_RECIPIENTS} addresses`, { field: 'to' });
  }
  return [...new Set(to.map((a) => normalizeEmail(a)))];
}
