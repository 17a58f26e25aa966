import type { Segment } from '../segments.ts';
import type { Campaign, CampaignStatus, RecipientContact } from '../types.ts';
import type { CounterDeltas } from './counters.ts';
import type { SendOutcome } from './sends.ts';

/** A campaign as written: its id, status and times come from the store; its list by id (one that exists). */
export type NewCampaign = Omit<Campaign, 'id' | 'status' | 'created_at' | 'sent_at' | 'list' | 'send_at' | 'status_reason'> & { list_id: number | null };

/** What `update` may change. */
export type CampaignChanges = Partial<NewCampaign>;

/** What a status change may set beside the status (undefined = left as it is). */
export interface TransitionFields {
  send_at?: number | null;
  status_reason?: string | null;
  /** the counters when it was resumed (see AutoPauseBase) */
  auto_pause_sent_base?: number;
  auto_pause_bad_base?: number;
}

/** What auto-pause leaves out: the sends and the bounces plus complaints counted before the last resume (zeros if none). */
export interface AutoPauseBase {
  sent: number;
  bad: number;
}

/** What decides a campaign's audience. */
export type AudienceOf = Pick<Campaign, 'id' | 'list' | 'segment'>;

export interface CampaignListQuery {
  status?: CampaignStatus;
  limit: number;
  /** ids above this one (the last id of the previous page) */
  after?: number;
}

export interface CampaignsRepo {
  create(input: NewCampaign, now: number): Promise<Campaign>;
  getById(id: number): Promise<Campaign | undefined>;
  statusOf(id: number): Promise<CampaignStatus | undefined>;
  autoPauseBase(id: number): Promise<AutoPauseBase>;
  /**
   * A bounce or complaint just counted on the campaign's send `sendId`: when the campaign has an
   * auto-pause base and that send is one of the sends the base counts (sent before the resume that
   * took it), the report is added to the base too, so the window after the resume judges only the
   * reports of its own sends. True when it was added.
   */
  addToAutoPauseBase(id: number, sendId: number): Promise<boolean>;
  /**
   * Compare-and-set: the status becomes `to` only when it is one of `from` at the moment of the
   * write (one UPDATE), so of two racing callers exactly one wins. `sent` also sets sent_at.
   * Returns the campaign as changed, or undefined when the status was none of `from`.
   */
  transition(id: number, from: readonly CampaignStatus[], to: CampaignStatus, fields: TransitionFields, now: number): Promise<Campaign | undefined>;
  /** changes content or audience while the status is one of `from`; undefined when it was not */
  update(id: number, from: readonly CampaignStatus[], changes: CampaignChanges): Promise<Campaign | undefined>;
  /** deletes a campaign that is still a draft (and its link list); false when it is not one */
  deleteDraft(id: number): Promise<boolean>;
  list(query: CampaignListQuery): Promise<Campaign[]>;
  /**
   * Audience members (the campaign's list's subscribers, or every contact; narrowed by its
   * segment) without a send row for the campaign, ordered by id after `afterId`. Contacts that
   * never opted in (`pending` double opt-in, `transactional`) are not part of an audience.
   */
  unsent(campaign: AudienceOf, afterId: number, limit: number): Promise<RecipientContact[]>;
  countUnsent(campaign: AudienceOf): Promise<number>;
  /** the unsent members a send would reach (suppressed contacts left out) */
  countReachable(campaign: AudienceOf): Promise<number>;
  /** ids of the campaigns in a status, oldest first (the worker continues those `sending`) */
  idsWithStatus(status: CampaignStatus): Promise<number[]>;
  /** ids of `scheduled` campaigns whose send_at is at or before `now`, earliest first */
  dueScheduled(now: number): Promise<number[]>;
  /** the earliest send_at after `after` of a `scheduled` campaign, if any */
  nextSendAt(after: number): Promise<number | undefined>;
  /**
   * Inside a claim's transaction: true while the campaign is `sending`, and it stays so until the
   * transaction ends (the row is locked: write-locked, or share-locked where the engine has row
   * locks, which a pause's update waits for just the same), so a pause either comes before the claim (nothing
   * is claimed) or after it (and waits for the claimed rows).
   */
  holdSending(id: number): Promise<boolean>;
  /**
   * One group commit of a campaign run, in one transaction: the sends of `start` still `queued`
   * become `sending` (attempts + 1; compare-and-set, just before the mailer gets them, and only
   * while the campaign is `sending`, its row held until the commit as holdSending holds it), the
   * `outcomes` are written on their rows still `sending` (a row reclaimed as interrupted keeps
   * that), and `counts` are added to the campaign's counters. A send of `start` whose contact is no
   * longer subscribed (or left the campaign's list) since the claim becomes `suppressed` instead,
   * counted so. Returns the rows this call started with their attempt count, and those it
   * suppressed; a row another run moved first, or that is gone, is in neither and must not be sent.
   * Fixed statements whatever the group's size and mix, in a transaction of its own (not for use
   * inside Store.transaction).
   */
  writeSendGroup(id: number, group: SendGroup, now: number): Promise<SendGroupStarts>;
  /** the campaign's send rows `sending` (handed to the mailer) that were touched at or after `since` (a live run holds them) */
  countSending(id: number, since: number): Promise<number>;
  /**
   * Gives back those of `sendIds` still `queued`: rows a run claimed and stopped before handing to
   * the mailer (paused, cancelled). A first attempt is deleted (its contact is unsent again); a retry
   * is `deferred` again. Returns how many it deleted.
   */
  releaseClaims(id: number, sendIds: number[]): Promise<number>;
}

/** What a group commit did with the sends it was to start (CampaignsRepo.writeSendGroup). */
export interface SendGroupStarts {
  started: { id: number; attempts: number }[];
  /** send ids not started because their contact left since the claim (now `suppressed`) */
  suppressed: number[];
}

/** What one group commit of a campaign run writes (CampaignsRepo.writeSendGroup). */
export interface SendGroup {
  /** sends about to be handed to the mailer */
  start: number[];
  /** outcomes as they are to be recorded (settled: a transient failure with attempts left is `deferred`) */
  outcomes: SendOutcome[];
  counts: CounterDeltas;
  /**
   * The campaign's segment, when it has one: a send to start whose contact no longer matches it is
   * `suppressed` (and counted so) as one whose contact left is. Null or absent: no segment.
   */
  segment?: Segment | null;
}
