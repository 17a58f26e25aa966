import type { Kysely } from 'kysely';
import { addDelta } from '../../core/storage/counters.ts';
import type { OutboundEvent } from '../../core/storage/outbound.ts';
import type { EventLabeler, TrackedEvent, TrackingBatchResult, TrackingRepo } from '../../core/storage/tracking-batches.ts';
import type { StoreDialect } from '../dialect.ts';
import { engagementData, type Outbox, TRACKED_TYPES } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { createCountersRepo } from './counters.ts';
import { findBursts, relabelBursts } from './link-bursts.ts';
import { type BatchNotes, createRecentClicks, type RecentClicks } from './recent-clicks.ts';
import { FirstTimes, newFirsts, type SendRow, setFirsts } from './tracking-firsts.ts';
import { type EventRow, eventInserts } from './tracking-inserts.ts';

// From this many events a batch skips the engine's foreign-key checks (its sends are read and
// locked in its transaction): turning them off costs every statement of the connection a new
// prepare, which a large batch's inserts more than pay back.
const UNCHECKED_FROM = 500;

export function createTrackingRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): TrackingRepo {
  // this store's recent clicks, so link-burst detection need not read them back (link-bursts.ts)
  const recent = createRecentClicks();
  const inserts = eventInserts(dialect, outbox);
  return {
    async applyBatch(events, label, batchId) {
      try {
        // opens alone, nobody in this process waiting for them: one statement where the engine has one
        const writeOpens = dialect.writeOpens;
        if (writeOpens && !outbox.listens(TRACKED_TYPES.open) && events.every((e) => e.type === 'open')) {
          return await recent.write(async (notes) => {
            const result = await writeOpens(db, outbox, { events, label, batch: batchId === undefined ? undefined : { id: batchId, at: notes.at }, now: latest(events) });
            if (batchId !== undefined) notes.row();
            return result;
          });
        }
        const { result, announced } = await recent.write((notes) =>
          dialect.writeTransaction(db, async (trx) => {
            const applied = await applyInTransaction(trx, dialect, inserts, outbox.listens.bind(outbox), events, label, recent, notes);
            // Last, so the retry of a batch whose first attempt is still committing waits on this
            // key (PostgreSQL) and then fails here, rolling back everything it wrote.
            if (batchId !== undefined) {
              await inserts.batchRow(trx, batchId, applied.result.inserted, notes.at);
              notes.row();
            }
            return applied;
          }, { referencesRead: events.length >= UNCHECKED_FROM }),
        );
        outbox.publish(announced);
        return result;
      } catch (err) {
        if (batchId === undefined || !dialect.isUniqueViolation(err)) throw err;
        const earlier = await db.selectFrom('notify_tracking_batches').select('events').where('id', '=', batchId).executeTakeFirst();
        if (!earlier) throw err;
        // the first attempt committed, its events with it (and published nothing: its reply was lost)
        return { inserted: Number(earlier.events), unknown: 0, firstOpens: 0, firstClicks: 0, replayed: true };
      }
    },
    async pruneBatches(before) {
      const r = await db.deleteFrom('notify_tracking_batches').where('created_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    async sendByToken(token) {
      const row = await db.selectFrom('notify_sends').select(['id', 'campaign_id', 'contact_id', 'sent_at']).where('token', '=', token).executeTakeFirst();
      return row && { id: Number(row.id), campaign_id: num(row.campaign_id), contact_id: num(row.contact_id), sent_at: num(row.sent_at) };
    },
    async sendById(id) {
      const row = await db.selectFrom('notify_sends').select(['id', 'token', 'campaign_id', 'contact_id', 'sent_at']).where('id', '=', id).executeTakeFirst();
      return row && { id: Number(row.id), token: row.token, campaign_id: num(row.campaign_id), contact_id: num(row.contact_id), sent_at: num(row.sent_at) };
    },
  };
}

async function applyInTransaction(
  trx: Kysely<Database>,
  dialect: StoreDialect,
  inserts: ReturnType<typeof eventInserts>,
  listens: Outbox['listens'],
  events: TrackedEvent[],
  label: EventLabeler,
  recent: RecentClicks,
  notes: BatchNotes,
): Promise<{ result: TrackingBatchResult; announced: OutboundEvent[] }> {
  const sends = await lockSends(trx, dialect, [...new Set(events.map((e) => e.token))]);
  const clicks = events.flatMap((e) => {
    const send = e.type === 'click' ? sends.get(e.token) : undefined;
    return send ? [{ event: e, sendId: send.id, campaignId: send.campaign_id }] : [];
  });
  const bursts = await findBursts(trx, clicks, recent);
  for (const c of clicks) notes.click(c.sendId, c.event.link_index, c.event.at);
  const rows: EventRow[] = [];
  const announced: OutboundEvent[] = [];
  // built for in-process listeners only: webhooksOut endpoints get the stored rows (tracking-inserts.ts)
  const announce = { open: listens(TRACKED_TYPES.open), click: listens(TRACKED_TYPES.click) };
  const firsts = new FirstTimes();
  // most events carry none: encoded once per batch, not once per event
  const noMetadata = dialect.jsonRowValue({});
  let unknown = 0;
  for (const e of events) {
    const send = sends.get(e.token);
    if (!send) {
      unknown++;
      continue;
    }
    const { isMachine, reason } = label(e, send, { burst: bursts.inBatch.has(e) });
    rows.push({
      type: e.type,
      send_id: send.id,
      contact_id: send.contact_id,
      campaign_id: send.campaign_id,
      link_index: e.link_index,
      metadata: isEmpty(e.metadata) ? noMetadata : dialect.jsonRowValue(e.metadata),
      is_machine: isMachine ? 1 : 0,
      machine_reason: reason,
      created_at: e.at,
    });
    if (announce[e.type]) announced.push({ type: TRACKED_TYPES[e.type], data: engagementData({ type: e.type, send, at: e.at, link_index: e.link_index, isMachine, reason }) });
    firsts.note(e.type, send, isMachine, e.at);
  }
  await inserts.events(trx, rows, latest(events));
  const byId = new Map([...sends.values()].map((s) => [s.id, s]));
  const burstDeltas = await relabelBursts(trx, bursts.stored, byId);
  const { updates, deltas, firstOpens, firstClicks } = newFirsts(firsts, byId);
  for (const [campaignId, d] of burstDeltas) addDelta(deltas, campaignId, d);
  await setFirsts(trx, updates);
  await createCountersRepo(trx).add(deltas);
  return { result: { inserted: rows.length, unknown, firstOpens, firstClicks }, announced };
}

/** the batch's own time (the requests' clock), not this machine's: rows stay due when a test's clock is */
function latest(events: TrackedEvent[]): number {
  let at = 0;
  for (const e of events) if (e.at > at) at = e.at;
  return at;
}

const SEND_COLUMNS = ['id', 'token', 'campaign_id', 'contact_id', 'sent_at', 'opened_at', 'human_opened_at', 'clicked_at', 'human_clicked_at'] as const;

/** The batch's sends by token, locked (the event inserts of this batch still reference them). */
async function lockSends(trx: Kysely<Database>, dialect: StoreDialect, tokens: string[]): Promise<Map<string, SendRow>> {
  const out = new Map<string, SendRow>();
  for (const r of await dialect.lockRowsByKey(trx, 'notify_sends', 'token', SEND_COLUMNS, tokens)) {
    const token = r[1] as string;
    out.set(token, {
      id: Number(r[0]),
      token,
      campaign_id: num(r[2] as number | null),
      contact_id: num(r[3] as number | null),
      sent_at: num(r[4] as number | null),
      opened_at: num(r[5] as number | null),
      human_opened_at: num(r[6] as number | null),
      clicked_at: num(r[7] as number | null),
      human_clicked_at: num(r[8] as number | null),
    });
  }
  return out;
}

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}

const num = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));
