import type { Campaign, CampaignStatus, RecipientContact } from '../types.ts';

/** A campaign as written: its id, status and times come from the store; its list by id (one that exists). */
export type NewCampaign = Omit<Campaign, 'id' | 'status' | 'created_at' | 'sent_at' | 'list'> & { list_id: number | null };

/** What decides a campaign's audience. */
export type AudienceOf = Pick<Campaign, 'id' | 'list' | 'segment'>;

export interface CampaignsRepo {
  create(input: NewCampaign, now: number): Promise<Campaign>;
  getById(id: number): Promise<Campaign | undefined>;
  setStatus(id: number, status: CampaignStatus, now: number): Promise<void>;
  /**
   * Audience members (the campaign's list's subscribers, or every contact; narrowed by its
   * segment) without a send row for the campaign, ordered by id after `afterId`. Contacts that
   * never opted in (`pending` double opt-in, `transactional`) are not part of an audience.
   */
  unsent(campaign: AudienceOf, afterId: number, limit: number): Promise<RecipientContact[]>;
  countUnsent(campaign: AudienceOf): Promise<number>;
  /** ids of the campaigns in a status, oldest first (the worker continues those `sending`) */
  idsWithStatus(status: CampaignStatus): Promise<number[]>;
}
