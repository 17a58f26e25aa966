import { COUNTER_NAMES } from '../../core/storage/counters.ts';
import { type FixedStatement, fixedStatement } from '../fixed-statement.ts';
import { ENDPOINT_COLUMNS, type Outbox, TRACKING_BATCH } from '../outbox.ts';
import { ADD_ON_CONFLICT } from '../repos/counters.ts';
import { columnArrayParameters, columnArraysText } from './column-arrays.ts';

/**
 * What the one-statement tracking writes share (tracking-opens.ts, tracking-clicks.ts): the first
 * times set on the sends, the counters they add, the outbox rows, the forms made once.
 */

const ZEROS = (except: Record<string, string>) => COUNTER_NAMES.map((n) => except[n] ?? '0').join(', ');

/**
 * `u`, the first `kind` times set where still null, from `f` (send id, campaign, `kind` and human
 * times or null), and `c`, the counters they add.
 */
export function firstTimeParts(kind: 'opened' | 'clicked'): string[] {
  return [
    `u as (update notify_sends t set ${kind}_at = coalesce(t.${kind}_at, f.${kind}), human_${kind}_at = coalesce(t.human_${kind}_at, f.human)
      from f where t.id = f.id and (f.${kind} is not null or f.human is not null)
      returning f.campaign_id, (f.${kind} is not null)::int as ${kind}, (f.human is not null)::int as human)`,
    // in campaign order, as CountersRepo.add: concurrent writers lock counter rows in one order
    `c as (insert into notify_campaign_counters (campaign_id, ${COUNTER_NAMES.join(', ')})
      select campaign_id, ${ZEROS({ [kind]: `sum(${kind})`, [`human_${kind}`]: 'sum(human)' })} from u where campaign_id is not null
      group by campaign_id order by campaign_id ${ADD_ON_CONFLICT})`,
  ];
}

/** the outbox rows naming a batch's inserted events (CTE `e`), one per webhooksOut endpoint taking tracked events */
export const OUTBOX_PART = `o as (insert into notify_outbound_events (event_id, endpoint, type, body, status, attempts, next_attempt_at, created_at, updated_at)
      select h.event_id, h.endpoint, h.type, '{"after":' || cast(m.lo - 1 as text) || ',"upTo":' || cast(m.hi as text) || '}', ?, 0, h.due, ?::bigint, ?::bigint
      from (${columnArraysText(ENDPOINT_COLUMNS)}) as h, (select min(id) as lo, max(id) as hi from e) as m where m.hi is not null)`;

/** OUTBOX_PART's parameters, none without an endpoint */
export function outboxParameters(outbox: Outbox, now: number): unknown[] {
  const endpoints = outbox.trackingRows(now);
  if (endpoints.length === 0) return [];
  return [TRACKING_BATCH, now, now, ...columnArrayParameters(ENDPOINT_COLUMNS, endpoints as unknown as Record<string, unknown>[])];
}

/** the four forms of a statement (with or without a batch row, an outbox row), each made once */
export function statementForms(text: (batchRow: boolean, outbox: boolean) => string): (batchRow: boolean, outbox: boolean) => FixedStatement {
  const statements = new Map<string, FixedStatement>();
  return (batchRow, outbox) => {
    const key = `${batchRow}${outbox}`;
    let s = statements.get(key);
    if (!s) statements.set(key, (s = fixedStatement(text(batchRow, outbox))));
    return s;
  };
}
