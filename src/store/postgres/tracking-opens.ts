import type { Kysely } from 'kysely';
import { COUNTER_NAMES } from '../../core/storage/counters.ts';
import type { TrackingBatchResult } from '../../core/storage/tracking-batches.ts';
import { columnList } from '../dialect.ts';
import { type FixedStatement, fixedStatement } from '../fixed-statement.ts';
import { ENDPOINT_COLUMNS, type Outbox, TRACKING_BATCH } from '../outbox.ts';
import { columnArrayParameters, columnArraysText, EMPTY_JSON, type EmptyColumns, emptyJsonColumns, emptyKey, ROW_ORDER, textArrayLiteral, unnestText } from './column-arrays.ts';
import type { OpensBatch } from '../group-writes.ts';
import type { Database } from '../schema.ts';
import { ADD_ON_CONFLICT } from '../repos/counters.ts';

/**
 * A batch of opens on PostgreSQL as ONE statement, outside any explicit transaction: it locks the
 * sends of its tokens (in id order, as every tracking batch does), inserts the events with each
 * send's ids as the lock read them, sets opened_at / human_opened_at where still null, adds the
 * first opens to the campaign counters, stores the batch id and, with a webhooksOut endpoint for
 * tracked events, the endpoint's outbox row naming the inserted ids.
 *
 * The general path (repos/tracking-batches.ts) reads the sends back to label each event and decide its
 * firsts in JS, and so takes a BEGIN, the locking read, the insert, the batch row and a COMMIT:
 * five round trips, each with its own parse and reply on both sides, and every send's nine columns
 * parsed on the pixel server's thread. An open's label never depends on its send (only a click's
 * does: core/engagement.ts), so opens are labelled before the write and the rest is decided where
 * the rows are. Measured on the bench's pixel server (2 cores, loaded): see the README.
 *
 * Same guarantees as the general path: the lock is the one an erasure waits for (repos/contacts.ts), so
 * an event carries the contact id its send has when the batch commits; a first open is decided on
 * the locked row, so two writers (`serve --workers`) never both count it; the batch id's unique key
 * makes a retried batch fail as a whole.
 */
const EVENT_INPUT = columnList({ token: 'text', metadata: 'json', is_machine: 'smallint', machine_reason: 'text', created_at: 'bigint' });
const ZEROS = (except: Record<string, string>) => COUNTER_NAMES.map((n) => except[n] ?? '0').join(', ');

function statementText(batchRow: boolean, outbox: boolean, empty: EmptyColumns): string {
  const metadata = empty.has('metadata') ? EMPTY_JSON : 'x.metadata';
  const parts = [
    `x as (select * from ${unnestText(EVENT_INPUT, empty)})`,
    // materialized: the lock is taken once, before anything reads the rows
    's as materialized (select t.id, t.token, t.campaign_id, t.contact_id, t.opened_at, t.human_opened_at from notify_sends t where t.token = any(?::text[]) order by t.id for no key update of t)',
    `e as (insert into notify_events (type, send_id, contact_id, campaign_id, link_index, metadata, is_machine, machine_reason, created_at)
      select 'open', s.id, s.contact_id, s.campaign_id, null, ${metadata}, x.is_machine, x.machine_reason, x.created_at
      from x join s on s.token = x.token order by s.contact_id, x.${ROW_ORDER} returning id)`,
    `f as (select s.id, s.campaign_id,
        case when s.opened_at is null then min(x.created_at) end as opened,
        case when s.human_opened_at is null then min(x.created_at) filter (where x.is_machine = 0) end as human
      from s join x on x.token = s.token where s.opened_at is null or s.human_opened_at is null
      group by s.id, s.campaign_id, s.opened_at, s.human_opened_at)`,
    `u as (update notify_sends t set opened_at = coalesce(t.opened_at, f.opened), human_opened_at = coalesce(t.human_opened_at, f.human)
      from f where t.id = f.id and (f.opened is not null or f.human is not null)
      returning f.campaign_id, (f.opened is not null)::int as opened, (f.human is not null)::int as human)`,
    // in campaign order, as CountersRepo.add: concurrent writers lock counter rows in one order
    `c as (insert into notify_campaign_counters (campaign_id, ${COUNTER_NAMES.join(', ')})
      select campaign_id, ${ZEROS({ opened: 'sum(opened)', human_opened: 'sum(human)' })} from u where campaign_id is not null
      group by campaign_id order by campaign_id ${ADD_ON_CONFLICT})`,
  ];
  if (batchRow) parts.push('b as (insert into notify_tracking_batches (id, events, created_at) select ?, count(*), ? from e)');
  if (outbox) {
    parts.push(`o as (insert into notify_outbound_events (event_id, endpoint, type, body, status, attempts, next_attempt_at, created_at, updated_at)
      select h.event_id, h.endpoint, h.type, '{"after":' || cast(m.lo - 1 as text) || ',"upTo":' || cast(m.hi as text) || '}', ?, 0, h.due, ?::bigint, ?::bigint
      from (${columnArraysText(ENDPOINT_COLUMNS)}) as h, (select min(id) as lo, max(id) as hi from e) as m where m.hi is not null)`);
  }
  return `with ${parts.join(',\n')}\nselect (select count(*) from e) as inserted, (select coalesce(sum(opened), 0) from u) as first_opens`;
}

/** the eight forms (with or without a batch row, an outbox row, the events' metadata), each made once */
const statements = new Map<string, FixedStatement>();
function statementFor(batchRow: boolean, outbox: boolean, empty: EmptyColumns): FixedStatement {
  const key = `${batchRow}${outbox}${emptyKey(empty)}`;
  let s = statements.get(key);
  if (!s) statements.set(key, (s = fixedStatement(statementText(batchRow, outbox, empty))));
  return s;
}


// an open's label reads no send (see above): this one stands for all
const NO_SEND = { id: 0, campaign_id: null, contact_id: null, sent_at: null };

export async function writeOpens(db: Kysely<Database>, outbox: Outbox, b: OpensBatch): Promise<TrackingBatchResult> {
  const rows = new Array<Record<string, unknown>>(b.events.length);
  const tokens = new Set<string>();
  for (let i = 0; i < b.events.length; i++) {
    const e = b.events[i];
    const { isMachine, reason } = b.label(e, NO_SEND, { burst: false });
    rows[i] = { token: e.token, metadata: e.metadata, is_machine: isMachine ? 1 : 0, machine_reason: reason, created_at: e.at };
    tokens.add(e.token);
  }
  // an open's metadata is empty (http/tracking-events.ts): then no array of it is sent
  const empty = emptyJsonColumns(EVENT_INPUT, rows);
  const parameters: unknown[] = [...columnArrayParameters(EVENT_INPUT, rows, empty), textArrayLiteral([...tokens])];
  if (b.batch) parameters.push(b.batch.id, b.batch.at);
  const endpoints = outbox.trackingRows(b.now);
  if (endpoints.length > 0) parameters.push(TRACKING_BATCH, b.now, b.now, ...columnArrayParameters(ENDPOINT_COLUMNS, endpoints as unknown as Record<string, unknown>[]));
  const { rows: out } = await statementFor(b.batch !== undefined, endpoints.length > 0, empty)<{ inserted: string; first_opens: string }>(db, parameters);
  const inserted = Number(out[0].inserted);
  return { inserted, unknown: b.events.length - inserted, firstOpens: Number(out[0].first_opens), firstClicks: 0 };
}
