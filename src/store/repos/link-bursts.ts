import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { ClickWindow } from '../../core/click-window.ts';
import { BURST_MIN_LINKS, BURST_WINDOW_MS, type ClickPoint, findLinkBursts } from '../../core/engagement.ts';
import { addDelta, type CounterDeltas } from '../../core/storage/counters.ts';
import type { Database } from '../schema.ts';
import type { RecentClicks } from './recent-clicks.ts';


interface BurstSend {
  id: number;
  campaign_id: number | null;
  contact_id: number | null;
  human_clicked_at: number | null;
}

/** a click of the batch with its send's id and campaign (the stored clicks are found by campaign) */
export interface BatchClick<E> {
  event: E;
  sendId: number;
  campaignId: number | null;
}

interface StoredClick {
  id: number;
  send_id: number;
  link_index: number | null;
  created_at: number;
  is_machine: number;
}

export interface Bursts<E> {
  /** clicks of this batch that belong to a burst */
  inBatch: Set<E>;
  /** stored clicks labelled human that turn out to belong to a burst, by send id */
  stored: Map<number, number[]>;
}

const CHUNK = 1000;
const CLICK = sql<boolean>`type = 'click'`;

/**
 * Sends grouped by a column the events share with them (campaign_id, contact_id), a null key
 * apart (`= null` finds nothing), at most CHUNK send ids per group.
 */
function groupsOf(sends: Iterable<[id: number, key: number | null]>): { keys: number[] | null; ids: number[] }[] {
  const keyed: { keys: Set<number>; ids: number[] }[] = [];
  const unkeyed: number[][] = [];
  for (const [id, key] of sends) {
    if (key === null) {
      if (unkeyed.length === 0 || unkeyed[unkeyed.length - 1].length >= CHUNK) unkeyed.push([]);
      unkeyed[unkeyed.length - 1].push(id);
    } else {
      if (keyed.length === 0 || keyed[keyed.length - 1].ids.length >= CHUNK) keyed.push({ keys: new Set(), ids: [] });
      keyed[keyed.length - 1].keys.add(key);
      keyed[keyed.length - 1].ids.push(id);
    }
  }
  return [...keyed.map((g) => ({ keys: [...g.keys], ids: g.ids })), ...unkeyed.map((ids) => ({ keys: null, ids }))];
}

/**
 * The clicks of these sends at or after `since`, found through notify_events_campaign_time
 * (campaign_id, type, created_at): the range read is every click of their campaigns in the window
 * (a drip's or one-off send's clicks: campaign_id null), each row then checked for its send. No
 * index by send is kept for clicks (migration 018): it cost every stored click a random b-tree
 * insert, while this read runs only when the writer's own window cannot answer.
 */
function inWindow(group: { keys: number[] | null; ids: number[] }, since: number) {
  return (eb: ExpressionBuilder<Database, 'notify_events'>) =>
    eb.and([group.keys === null ? eb('campaign_id', 'is', null) : eb('campaign_id', 'in', group.keys), CLICK, eb('created_at', '>=', since), eb('send_id', 'in', group.ids)]);
}

/**
 * Link bursts across flushes. A scanner's clicks on every link arrive within a second or two,
 * usually spread over several group-commit batches, so the burst is only visible with the send's
 * recent clicks already stored. Part of the tracking write transaction (the sends are locked).
 */
export async function findBursts<E extends { at: number; link_index: number | null }>(trx: Kysely<Database>, clicks: BatchClick<E>[], recent?: RecentClicks): Promise<Bursts<E>> {
  const result: Bursts<E> = { inBatch: new Set(), stored: new Map() };
  if (clicks.length === 0) return result;
  const since = clicks.reduce((min, c) => Math.min(min, c.event.at), Number.POSITIVE_INFINITY) - BURST_WINDOW_MS;
  const window = recent && (await recent.knows(trx, since));
  const sendIds = window ? sendsWithManyLinksKnown(window, clicks, since) : await sendsWithManyLinks(trx, clicks, since);
  // Only those sends can hold a burst: most flushes stop here, with no work per click beyond the count of links.
  if (sendIds.length === 0) return result;
  const candidates = new Set(sendIds);
  const mine = clicks.filter((c) => candidates.has(c.sendId));
  const campaignOf = new Map(mine.map((c) => [c.sendId, c.campaignId]));
  const stored: StoredClick[] = [];
  for (const group of groupsOf(sendIds.map((id) => [id, campaignOf.get(id)!]))) {
    const rows = await trx.selectFrom('notify_events').select(['id', 'send_id', 'link_index', 'created_at', 'is_machine']).where(inWindow(group, since)).execute();
    for (const r of rows) stored.push({ id: Number(r.id), send_id: Number(r.send_id), link_index: r.link_index === null ? null : Number(r.link_index), created_at: Number(r.created_at), is_machine: Number(r.is_machine) });
  }
  const points: ClickPoint<E | StoredClick>[] = [
    ...stored.map((s) => ({ key: s, sendId: s.send_id, link: s.link_index, at: s.created_at })),
    ...mine.map((c) => ({ key: c.event, sendId: c.sendId, link: c.event.link_index, at: c.event.at })),
  ];
  const marked = findLinkBursts(points);
  for (const c of mine) if (marked.has(c.event)) result.inBatch.add(c.event);
  for (const s of stored) {
    if (!marked.has(s) || s.is_machine !== 0) continue;
    result.stored.set(s.send_id, [...(result.stored.get(s.send_id) ?? []), s.id]);
  }
  return result;
}

/** sendsWithManyLinks from the window: the same answer with no query */
function sendsWithManyLinksKnown(window: ClickWindow, clicks: BatchClick<{ link_index: number | null }>[], since: number): number[] {
  const links = new Map<number, Set<number>>();
  for (const c of clicks) {
    let set = links.get(c.sendId);
    if (!set) {
      set = new Set();
      links.set(c.sendId, set);
      window.linksSince(c.sendId, since, set);
    }
    if (c.event.link_index !== null) set.add(c.event.link_index);
  }
  const out: number[] = [];
  for (const [id, set] of links) if (set.size >= BURST_MIN_LINKS) out.push(id);
  return out;
}

/**
 * Only a send with BURST_MIN_LINKS different links clicked in the window (stored or in this batch)
 * can hold a burst, so the stored clicks are read for those sends only. Grouped in the query: a
 * send whose one link is clicked thousands of times a second (a link shared publicly) costs rows
 * read, not a transfer of every click.
 */
async function sendsWithManyLinks(trx: Kysely<Database>, clicks: BatchClick<{ link_index: number | null }>[], since: number): Promise<number[]> {
  const links = new Map<number, Set<number | null>>();
  const campaignOf = new Map<number, number | null>();
  for (const c of clicks) {
    if (!links.has(c.sendId)) links.set(c.sendId, new Set());
    links.get(c.sendId)!.add(c.event.link_index);
    campaignOf.set(c.sendId, c.campaignId);
  }
  for (const group of groupsOf(campaignOf)) {
    const rows = await trx.selectFrom('notify_events').select(['send_id', 'link_index']).where(inWindow(group, since)).groupBy(['send_id', 'link_index']).execute();
    for (const r of rows) links.get(Number(r.send_id))!.add(r.link_index === null ? null : Number(r.link_index));
  }
  return [...links.keys()].filter((id) => [...links.get(id)!].filter((l) => l !== null).length >= BURST_MIN_LINKS);
}

/**
 * Relabels stored clicks of a burst as machine and moves each affected send's human_clicked_at to
 * its first remaining human click (after this batch's events are inserted). A send left with none
 * gives its unique human click back: the returned deltas take it off human_clicked. The in-memory
 * send rows are updated so the batch's own first-click bookkeeping sees the corrected state.
 */
export async function relabelBursts(trx: Kysely<Database>, stored: Map<number, number[]>, sends: Map<number, BurstSend>): Promise<Map<number, CounterDeltas>> {
  const deltas = new Map<number, CounterDeltas>();
  if (stored.size === 0) return deltas;
  const ids = [...stored.values()].flat();
  for (let i = 0; i < ids.length; i += CHUNK) {
    await trx.updateTable('notify_events').set({ is_machine: 1, machine_reason: 'link_burst' }).where('id', 'in', ids.slice(i, i + CHUNK)).execute();
  }
  const counted = [...stored.keys()].filter((id) => sends.get(id)?.human_clicked_at !== null);
  if (counted.length === 0) return deltas;
  // A send's first human click may be older than any window, so it is looked for among the
  // events of the send's person (notify_events_contact), where a click is stored with its send's
  // contact_id (an erased person's under null, as their send's).
  const firstHuman = new Map<number, number>();
  for (const group of groupsOf(counted.map((id) => [id, sends.get(id)!.contact_id]))) {
    const rows = await trx
      .selectFrom('notify_events')
      .select((eb) => ['send_id', eb.fn.min('created_at').as('first')])
      .where((eb) => (group.keys === null ? eb('contact_id', 'is', null) : eb('contact_id', 'in', group.keys)))
      .where('send_id', 'in', group.ids)
      .where(CLICK)
      .where('is_machine', '=', 0)
      .groupBy('send_id')
      .execute();
    for (const r of rows) firstHuman.set(Number(r.send_id), Number(r.first));
  }
  for (const id of counted) {
    const send = sends.get(id)!;
    const first = firstHuman.get(id) ?? null;
    if (first === send.human_clicked_at) continue;
    await trx.updateTable('notify_sends').set({ human_clicked_at: first }).where('id', '=', id).execute();
    if (first === null) addDelta(deltas, send.campaign_id, { human_clicked: -1 });
    send.human_clicked_at = first;
  }
  return deltas;
}
