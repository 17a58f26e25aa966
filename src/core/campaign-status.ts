import { NotifyError } from '../errors.ts';
import type { Campaign, CampaignStatus } from './types.ts';

/**
 * Which status each action may start from. `cancelled` and `sent` are final: nothing leaves them.
 * A scheduled campaign may be paused (it then waits for resume) and a paused one scheduled (it
 * starts again at that time).
 */
export const ALLOWED_FROM = {
  schedule: ['draft', 'scheduled', 'paused'],
  pause: ['scheduled', 'sending'],
  resume: ['paused'],
  cancel: ['draft', 'scheduled', 'sending', 'paused'],
  update: ['draft', 'scheduled', 'paused'],
  delete: ['draft'],
  /** what a send run starts (a scheduled one only once due) */
  start: ['draft', 'scheduled'],
} as const satisfies Record<string, readonly CampaignStatus[]>;

export type CampaignAction = keyof typeof ALLOWED_FROM;

/** INVALID_STATE naming the action, the current status and what it would need. */
export function invalidState(action: CampaignAction, campaign: Pick<Campaign, 'id' | 'status'>): NotifyError {
  const from: readonly string[] = ALLOWED_FROM[action];
  return new NotifyError('INVALID_STATE', `Cannot ${action} campaign ${campaign.id}: it is ${campaign.status} (${action} needs ${from.join(' or ')})`, {
    campaignId: campaign.id,
    status: campaign.status,
    action,
  });
}

export function allows(action: CampaignAction, status: CampaignStatus): boolean {
  return (ALLOWED_FROM[action] as readonly CampaignStatus[]).includes(status);
}
