import { randomBytes } from 'node:crypto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { BURST_WINDOW_MS } from '../core/engagement.ts';
import type { EventSink, OutboundEvent, OutboundEventType } from '../core/storage/outbound.ts';
import { columnList, type StoreDialect } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * The writing side of the transactional outbox: a repository that causes an event hands it here
 * inside its own transaction (one row per event and endpoint that takes it: no cause without its
 * event, no event without its cause) and publishes it to in-process listeners only once that
 * transaction has committed.
 */
export interface Outbox {
  wants(type: OutboundEventType): boolean;
  /** an in-process listener wants this type (endpoints aside) */
  listens(type: OutboundEventType): boolean;
  /**
   * Called inside a tracking batch's transaction before its events are inserted: where they will
   * start, or undefined when no endpoint takes opens or clicks (nothing to write then).
   */
  trackingStart(trx: Kysely<Database>): Promise<number | undefined>;
  /** after the batch's events: one row per endpoint naming them (trackingRange), expanded by the worker */
  writeTracking(trx: Kysely<Database>, start: number, now: number): Promise<void>;
  /** whether an endpoint takes opens or clicks (trackingStart is undefined when not) */
  readonly tracking: boolean;
  /** the outbox rows of a tracking batch written at `now`, one per endpoint that takes opens or clicks (its range is added where they are inserted) */
  trackingRows(now: number): TrackingEndpointRow[];
  /**
   * PostgreSQL: runs `insert` (an INSERT into notify_events ... RETURNING id of a batch's events)
   * and writes the rows writeTracking would, in one statement: the range is the inserted ids'.
   */
  insertTracked(trx: Kysely<Database>, insert: RawBuilder<unknown>, now: number): Promise<void>;
  /** the rows of these events, inside the caller's transaction */
  write(trx: Kysely<Database>, events: OutboundEvent[], now: number): Promise<void>;
  /** after the caller's commit */
  publish(events: OutboundEvent[]): void;
}

const ROWS_PER_INSERT = 1000;

/** An endpoint's row for one tracking batch: `type` lists the event types the endpoint takes. */
export interface TrackingEndpointRow {
  event_id: string;
  endpoint: string;
  type: string;
  due: number;
}

export const ENDPOINT_COLUMNS = columnList({ event_id: 'text', endpoint: 'text', type: 'text', due: 'bigint' });
const COLUMNS = columnList({ event_id: 'text', endpoint: 'text', type: 'text', body: 'text', status: 'text', attempts: 'integer', next_attempt_at: 'bigint', created_at: 'bigint', updated_at: 'bigint' });

/** The id receivers dedupe on: random, so two processes never make the same one. */
export const newEventId = () => `evt_${randomBytes(16).toString('base64url')}`;

const none = async () => {};
/** no endpoints and no listeners: nothing to write, a tracking batch's events inserted alone */
const NO_OUTBOX: Outbox = { wants: () => false, listens: () => false, tracking: false, trackingRows: () => [], trackingStart: async () => undefined, writeTracking: none, insertTracked: (trx, insert) => insert.execute(trx).then(none), write: none, publish: () => {} };

export function createOutbox(sink: EventSink | undefined, dialect: Pick<StoreDialect, 'jsonRows'>): Outbox {
  if (!sink) return NO_OUTBOX;
  const tracking = trackingEndpoints(sink);
  // A batch whose endpoint takes clicks is due once later clicks could still relabel them (LABELS_SETTLE_MS).
  const trackingRows = (now: number): TrackingEndpointRow[] => {
    if (tracking.length === 0) return [];
    const id = `bat_${randomBytes(12).toString('base64url')}`;
    return tracking.map(({ endpoint, types }) => ({ event_id: id, endpoint, type: types.join(','), due: types.includes(TRACKED_TYPES.click) ? now + LABELS_SETTLE_MS : now }));
  };
  const batchEndpoints = (now: number) => dialect.jsonRows(JSON.stringify(trackingRows(now)), ENDPOINT_COLUMNS);
  return {
    wants: (type) => sink.wants(type),
    listens: (type) => sink.listens(type),
    tracking: tracking.length > 0,
    trackingRows,
    trackingStart: async (trx) => (tracking.length === 0 ? undefined : lastEventId(trx)),
    async writeTracking(trx, start, now) {
      // One statement: the end of the range is read where the rows are written (a round trip less
      // inside the batch's transaction, which holds its sends' row locks meanwhile). A scalar
      // subquery: SQLite answers it from the key's last entry, while the same max() as a table in
      // FROM read the whole of notify_events (an index scan per flush, growing with the table).
      const at = sql`cast(${now} as bigint)`;
      const upTo = sql`(select max(id) from notify_events)`;
      await sql`insert into notify_outbound_events (event_id, endpoint, type, body, status, attempts, next_attempt_at, created_at, updated_at)
        select x.event_id, x.endpoint, x.type, ${`{"after":${start},"upTo":`} || cast(${upTo} as text) || '}', ${TRACKING_BATCH}, 0, x.due, ${at}, ${at}
        from (${batchEndpoints(now)}) as x
        where ${upTo} > ${start}`.execute(trx);
    },
    async insertTracked(trx, insert, now) {
      if (tracking.length === 0) {
        await insert.execute(trx);
        return;
      }
      // Neither the largest id before the insert nor after it is read: the range is the batch's
      // own ids, (smallest - 1, largest], which a data-modifying WITH hands to the outbox insert.
      const at = sql`cast(${now} as bigint)`;
      await sql`with e as (${insert})
        insert into notify_outbound_events (event_id, endpoint, type, body, status, attempts, next_attempt_at, created_at, updated_at)
        select x.event_id, x.endpoint, x.type, '{"after":' || cast(m.lo - 1 as text) || ',"upTo":' || cast(m.hi as text) || '}', ${TRACKING_BATCH}, 0, x.due, ${at}, ${at}
        from (${batchEndpoints(now)}) as x, (select min(id) as lo, max(id) as hi from e) as m
        where m.hi is not null`.execute(trx);
    },
    write: (trx, events, now) => writeEvents(trx, sink, dialect, events, now),
    publish(events) {
      if (events.length > 0) sink.publish(events);
    },
  };
}

/** one row per event and endpoint that takes it, in the caller's transaction */
async function writeEvents(trx: Kysely<Database>, sink: EventSink, dialect: Pick<StoreDialect, 'jsonRows'>, events: OutboundEvent[], now: number): Promise<void> {
  const rows = events.flatMap((event) => {
    const endpoints = sink.endpointsFor(event.type);
    if (endpoints.length === 0) return [];
    const id = newEventId();
    const body = JSON.stringify({ id, type: event.type, created_at: new Date(now).toISOString(), data: event.data });
    return endpoints.map((endpoint) => ({ event_id: id, endpoint, type: event.type, body, status: 'pending', attempts: 0, next_attempt_at: now, created_at: now, updated_at: now }));
  });
  // One JSON parameter a statement, as the tracking batch's events: a tracking flush writes up to
  // a thousand of these, and a multi-row INSERT of that many bind parameters costs more to build
  // and prepare on the pixel server's own thread than to run.
  const names = sql.raw(COLUMNS.map((c) => c.name).join(', '));
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await sql`insert into notify_outbound_events (${names}) ${dialect.jsonRows(JSON.stringify(rows.slice(i, i + ROWS_PER_INSERT)), COLUMNS)}`.execute(trx);
  }
}

/**
 * The status of a row that stands for the opens and clicks of one tracking batch, for one endpoint
 * (its `type` lists the event types that endpoint takes). Writing one row per event on the tracking
 * writer's thread halved pixel throughput on SQLite; this row costs the batch one index lookup
 * and one insert, and the worker turns it into the events' rows (repos/outbound.ts).
 */
export const TRACKING_BATCH = 'batch';

/**
 * How long after its last event a batch waits before the worker expands it, when its endpoint takes
 * clicks: a link burst (a scanner following every link) is only seen once its later clicks are
 * stored, and then relabels the earlier ones as a machine's. After the burst window (and a margin
 * for the later clicks' flush) the labels are final, so a webhook carries the label the human-only
 * figures count, whenever the worker runs. Opens are never relabelled: an opens-only endpoint's
 * batch is due at once.
 */
export const LABELS_SETTLE_MS = BURST_WINDOW_MS + 3_000;

/**
 * The ids of a batch's events lie in (after, upTo]: `after` is the largest id visible before the
 * batch's insert, `upTo` the largest after it. Ids come from one increasing sequence, so every id
 * of the batch is in the range; a concurrent batch's events may be too, and expand to the same
 * event ids (made from the event row's id), which the unique (event_id, endpoint) keeps once.
 */
export interface TrackingRange {
  after: number;
  upTo: number;
}

/** the engagement types of the tracking writer, as event rows name them and as events do */
export const TRACKED_TYPES = { open: 'notify:email.opened', click: 'notify:email.clicked' } as const satisfies Record<string, OutboundEventType>;

/** The id of the event of one stored open or click: fixed by the row, so every expansion and try gives the same. */
export const engagementEventId = (eventRowId: number) => `evt_e${eventRowId}`;

/** What `notify:email.opened` / `clicked` carry; a click names its link by its position in the email. */
export function engagementData(e: { type: 'open' | 'click'; send: { id: number; campaign_id: number | null; contact_id: number | null }; at: number; link_index: number | null; isMachine: boolean; reason: string | null }): Record<string, unknown> {
  return {
    send: { id: e.send.id, campaign_id: e.send.campaign_id, contact_id: e.send.contact_id },
    at: new Date(e.at).toISOString(),
    ...(e.type === 'click' ? { link_index: e.link_index } : {}),
    isMachine: e.isMachine,
    machineReason: e.reason,
  };
}

function trackingEndpoints(sink: EventSink): { endpoint: string; types: OutboundEventType[] }[] {
  const byEndpoint = new Map<string, OutboundEventType[]>();
  for (const type of Object.values(TRACKED_TYPES)) for (const endpoint of sink.endpointsFor(type)) byEndpoint.set(endpoint, [...(byEndpoint.get(endpoint) ?? []), type]);
  return [...byEndpoint].map(([endpoint, types]) => ({ endpoint, types }));
}

async function lastEventId(trx: Kysely<Database>): Promise<number> {
  const row = await trx.selectFrom('notify_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}

/**
 * Runs `fn` in the caller's transaction when `db` is one, else in a new one: a write and the events
 * it causes commit together either way.
 */
export function atomically<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** The outbox of repositories bound to one Store.transaction: what they publish waits for its commit. */
export function deferredOutbox(outbox: Outbox): { outbox: Outbox; committed(): void } {
  const held: OutboundEvent[] = [];
  return {
    outbox: { ...outbox, publish: (events) => void held.push(...events) },
    committed: () => outbox.publish(held),
  };
}
