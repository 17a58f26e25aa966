import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { autoPauseBaseNow, isAutoPaused } from './auto-pause.ts';
import { waitForRunsToStop } from './campaign-control.ts';
import { ALLOWED_FROM, type CampaignAction, invalidState } from './campaign-status.ts';
import type { TransitionFields } from './storage/campaigns.ts';
import { type Campaign, CAMPAIGN_STATUSES, type CampaignStatus } from './types.ts';

/**
 * schedule, pause, resume and cancel: each one compare-and-set on the status (so two racing calls
 * never both succeed), INVALID_STATE naming the current status otherwise. pause and cancel return
 * once the runs sending the campaign (in any process) have stopped: after they return, no further
 * message of it leaves.
 */
export interface CampaignLifecycle {
  /** -> scheduled; the worker starts it at sendAt (a Date, or ISO 8601; without an offset: UTC) */
  schedule(campaignId: number, sendAt: Date | string): Promise<Campaign>;
  /** returns once no further message of the campaign will leave (the sends in flight end first) */
  pause(campaignId: number): Promise<Campaign>;
  /** continues where it stopped; nobody gets it twice, however many workers */
  resume(campaignId: number): Promise<Campaign>;
  /** final; returns once no further message will leave */
  cancel(campaignId: number): Promise<Campaign>;
}

export function createCampaignLifecycle(ctx: Context, checkId: (id: unknown) => number): CampaignLifecycle {
  const move = async (action: CampaignAction, rawId: unknown, to: (c: Campaign) => CampaignStatus, fields: TransitionFields = {}) => {
    const id = checkId(rawId);
    const current = await ctx.store.campaigns.getById(id);
    if (!current) throw new NotifyError('NOT_FOUND', `Campaign ${id} not found`, { campaignId: id });
    const from: readonly CampaignStatus[] = ALLOWED_FROM[action];
    if (!from.includes(current.status)) throw invalidState(action, current);
    // sent again after an auto-pause: it judges what comes from now on (the marketer saw the rest); a
    // pause by hand says nothing about bounces, so the campaign stays judged as before
    const base = current.status === 'paused' && isAutoPaused(current) ? await autoPauseBaseNow(ctx, id) : {};
    const moved = await ctx.store.campaigns.transition(id, [current.status], to(current), { ...fields, ...base }, ctx.clock.now());
    if (moved) return { before: current, after: moved };
    // changed between the read and the write (a racing call, a run finishing): report what it is now
    throw invalidState(action, (await ctx.store.campaigns.getById(id)) ?? current);
  };

  const settle = async (c: Campaign): Promise<Campaign> => {
    const held = await waitForRunsToStop(ctx, c.id);
    if (held > 0) ctx.log.warn({ campaignId: c.id, held }, `campaign ${c.id}: ${held} send(s) still in flight at a mail server that has not answered; nothing more is started`);
    return (await ctx.store.campaigns.getById(c.id)) ?? c;
  };

  return {
    async schedule(id, sendAt) {
      const at = parseSendAt(sendAt, ctx.clock.now());
      return (await move('schedule', id, () => 'scheduled', { send_at: at, status_reason: null })).after;
    },
    async pause(id) {
      const { before, after } = await move('pause', id, () => 'paused', { status_reason: null });
      return before.status === 'sending' ? settle(after) : after;
    },
    async resume(id) {
      // paused before its start time: it waits for that time again; otherwise it sends from now
      const due = (c: Campaign) => (c.send_at && c.send_at.getTime() > ctx.clock.now() ? 'scheduled' : 'sending');
      return (await move('resume', id, due, { status_reason: null })).after;
    },
    async cancel(id) {
      const { before, after } = await move('cancel', id, () => 'cancelled');
      const settled = before.status === 'sending' ? await settle(after) : after;
      await cancelWaitingSends(ctx, settled.id);
      return settled;
    },
  };
}

/**
 * A cancelled campaign's sends still waiting for a try (deferred, or queued by a run that died) would
 * otherwise stay so for ever: they become `cancelled`, counted in the total but neither sent nor
 * failed. No run can start them meanwhile: a send starts only while its campaign is `sending`.
 */
export async function cancelWaitingSends(ctx: Pick<Context, 'store' | 'clock' | 'log'>, campaignId: number): Promise<void> {
  const n = await ctx.store.sends.cancelWaiting({ campaignId }, ctx.clock.now());
  if (n > 0) ctx.log.info({ campaignId, sends: n }, `campaign ${campaignId} cancelled: ${n} send(s) waiting for a retry will not be tried`);
}

const ISO_LOCAL = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;
const ISO_ZONED = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A Date, or an ISO 8601 time: with `Z` or an offset, or without (read as UTC, never as the
 * server's local time). Refused: anything else, and a time already past.
 */
export function parseSendAt(value: unknown, now: number): number {
  let ms = Number.NaN;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string' && ISO_ZONED.test(value.trim())) ms = Date.parse(value.trim().replace(' ', 'T'));
  else if (typeof value === 'string' && ISO_LOCAL.test(value.trim())) ms = Date.parse(`${value.trim().replace(' ', 'T')}Z`);
  if (!Number.isFinite(ms) || (typeof value === 'string' && !realCalendarTime(value.trim()))) {
    throw new NotifyError('INVALID_INPUT', `sendAt must be a Date or an ISO 8601 time such as 2026-05-01T09:00:00Z (got ${JSON.stringify(value instanceof Date ? 'Invalid Date' : value)})`, { field: 'sendAt' });
  }
  if (ms < now) throw new NotifyError('INVALID_INPUT', `sendAt ${new Date(ms).toISOString()} is in the past (now ${new Date(now).toISOString()})`, { field: 'sendAt' });
  return ms;
}

/**
 * Date.parse rolls a day the month does not have over into the next month (2026-02-30 is 2 March)
 * and takes hour 24 as the next day's midnight: such a time is a typo, not the one meant.
 */
function realCalendarTime(text: string): boolean {
  const [, y, mo, d, h] = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2})/.exec(text) ?? [];
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  return day.getUTCFullYear() === Number(y) && day.getUTCMonth() === Number(mo) - 1 && day.getUTCDate() === Number(d) && Number(h) < 24;
}

export function checkStatus(value: unknown): CampaignStatus | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!(CAMPAIGN_STATUSES as readonly unknown[]).includes(value)) throw new NotifyError('INVALID_INPUT', `status must be one of ${CAMPAIGN_STATUSES.join(', ')} (got ${JSON.stringify(value)})`, { field: 'status' });
  return value as CampaignStatus;
}
