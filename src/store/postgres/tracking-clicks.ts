import type { Kysely } from 'kysely';
import { MIN_HUMAN_CLICK_DELAY_MS } from '../../core/engagement.ts';
import type { TrackingBatchResult } from '../../core/storage/tracking-batches.ts';
import { columnList } from '../dialect.ts';
import type { ClicksBatch, GroupWrites } from '../group-writes.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { columnArrayParameters, ROW_ORDER, textArrayLiteral } from './column-arrays.ts';
import { firstTimeParts, OUTBOX_PART, outboxParameters, statementForms } from './tracking-statement.ts';

/**
 * A batch of clicks on PostgreSQL as ONE statement, as tracking-opens.ts writes opens: it locks the
 * sends of its tokens in id order, inserts the events, sets clicked_at / human_clicked_at where still
 * null, adds the first clicks to the campaign counters, stores the batch row and the webhooksOut
 * outbox rows. The general path (repos/tracking-batches.ts) takes five round trips for the same.
 *
 * A click's label may depend on its send: what the request tells (method, user agent) is decided
 * before, with no send (core/engagement.ts); too soon after delivery is decided here on the locked
 * send's sent_at, with the same delay. A link burst is never decided here: the caller sends only
 * batches none of whose sends can hold one. That check used the caller's memory of its own recent
 * clicks, so the statement first counts the batch rows from `horizon` on: another number than the
 * caller's means another writer stored clicks meanwhile, and then nothing is written (`ok` false:
 * the caller takes the general path).
 *
 * Same guarantees as the opens' statement: the sends are locked as an erasure's lock waits for, a
 * first click is decided on the locked row, the batch id's unique key fails a retried batch whole.
 */
const EVENT_INPUT = columnList({ token: 'text', link_index: 'integer', metadata: 'json', is_machine: 'smallint', machine_reason: 'text', created_at: 'bigint' });

function statementText(batchRow: boolean, outbox: boolean): string {
  const parts = [
    'g as (select count(*) = ?::bigint as ok from notify_tracking_batches where created_at >= ?::bigint)',
    `x as (select * from unnest(${EVENT_INPUT.map((c) => `?::${c.type === 'json' ? 'jsonb' : c.type}[]`).join(', ')}) with ordinality as x(${EVENT_INPUT.map((c) => c.name).join(', ')}, ${ROW_ORDER}) where (select ok from g))`,
    // materialized: the lock is taken once, before anything reads the rows
    's as materialized (select t.id, t.token, t.campaign_id, t.contact_id, t.sent_at, t.clicked_at, t.human_clicked_at from notify_sends t where t.token = any(?::text[]) and (select ok from g) order by t.id for no key update of t)',
    `l as (select x.*, s.id as send_id, s.contact_id, s.campaign_id,
        x.is_machine = 0 and s.sent_at is not null and x.created_at - s.sent_at < ${MIN_HUMAN_CLICK_DELAY_MS} as too_soon
      from x join s on s.token = x.token)`,
    `e as (insert into notify_events (type, send_id, contact_id, campaign_id, link_index, metadata, is_machine, machine_reason, created_at)
      select 'click', l.send_id, l.contact_id, l.campaign_id, l.link_index, l.metadata,
        case when l.too_soon then 1 else l.is_machine end, case when l.too_soon then 'too_soon_after_delivery' else l.machine_reason end, l.created_at
      from l order by l.contact_id, l.${ROW_ORDER} returning id)`,
    `f as (select s.id, s.campaign_id,
        case when s.clicked_at is null then min(l.created_at) end as clicked,
        case when s.human_clicked_at is null then min(l.created_at) filter (where l.is_machine = 0 and not l.too_soon) end as human
      from s join l on l.send_id = s.id where s.clicked_at is null or s.human_clicked_at is null
      group by s.id, s.campaign_id, s.clicked_at, s.human_clicked_at)`,
    ...firstTimeParts('clicked'),
  ];
  if (batchRow) parts.push('b as (insert into notify_tracking_batches (id, events, created_at) select ?, count(*), ? from e having (select ok from g))');
  if (outbox) parts.push(OUTBOX_PART);
  return `with ${parts.join(',\n')}
select (select ok from g) as ok, (select count(*) from e) as inserted, (select coalesce(sum(clicked), 0) from u) as first_clicks,
  (select array_agg(s.token) from s) as tokens, (select array_agg(s.id) from s) as ids`;
}

const statementFor = statementForms(statementText);

// what the request alone tells: the send-dependent rule is the statement's (see above)
const NO_SEND = { id: 0, campaign_id: null, contact_id: null, sent_at: null };

interface Written {
  ok: boolean;
  inserted: string;
  first_clicks: string;
  tokens: string[] | null;
  ids: (string | number)[] | null;
}

export const writeClicks: NonNullable<GroupWrites['writeClicks']> = async (db: Kysely<Database>, outbox: Outbox, b: ClicksBatch, window) => {
  const rows = new Array<Record<string, unknown>>(b.events.length);
  const tokens = new Set<string>();
  for (let i = 0; i < b.events.length; i++) {
    const e = b.events[i];
    const { isMachine, reason } = b.label(e, NO_SEND, { burst: false });
    rows[i] = { token: e.token, link_index: e.link_index, metadata: e.metadata, is_machine: isMachine ? 1 : 0, machine_reason: reason, created_at: e.at };
    tokens.add(e.token);
  }
  const parameters: unknown[] = [window.batches, window.horizon, ...columnArrayParameters(EVENT_INPUT, rows), textArrayLiteral([...tokens])];
  if (b.batch) parameters.push(b.batch.id, b.batch.at);
  const endpoints = outboxParameters(outbox, b.now);
  parameters.push(...endpoints);
  const { rows: out } = await statementFor(b.batch !== undefined, endpoints.length > 0)<Written>(db, parameters);
  const w = out[0];
  if (!w.ok) return undefined;
  const sends = new Map<string, number>();
  if (w.tokens && w.ids) for (let i = 0; i < w.tokens.length; i++) sends.set(w.tokens[i], Number(w.ids[i]));
  const inserted = Number(w.inserted);
  const result: TrackingBatchResult = { inserted, unknown: b.events.length - inserted, firstOpens: 0, firstClicks: Number(w.first_clicks) };
  return { result, sends };
};
