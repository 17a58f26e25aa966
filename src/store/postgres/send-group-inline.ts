import { COUNTER_NAMES as NAMES } from '../../core/storage/counters.ts';
import { ADD_ON_CONFLICT } from '../repos/counters.ts';

/**
 * The group commit as one statement of its own: for a database not migrated to 022 yet (no
 * notify_send_group: new code running before `notify migrate`), and for a segment campaign, whose
 * segment's condition goes into the suppression. Never kept prepared (fixed-statement.ts). Each later part reads the one before it, which makes
 * them run in that order; the start skips the rows the suppression took (both read the same
 * snapshot). `suppress`, `start` and `finish` are send-groups.ts's statements, `start` with the
 * exclusion of the suppressed rows.
 */
export const inlineGroup = (suppress: string, start: string, finish: string) => `with suppressed as (${suppress}),
started as (${start}),
finished as (
  ${finish} and (select count(*) from started) >= 0
  returning s.id
),
counted as (
  insert into notify_campaign_counters (campaign_id, ${NAMES.join(', ')})
  select ?::bigint${NAMES.map((n) => (n === 'suppressed' ? ', ?::bigint + (select count(*) from suppressed)' : ', ?::bigint')).join('')}
  where (?::boolean or exists (select 1 from suppressed)) and (select count(*) from finished) >= 0
  ${ADD_ON_CONFLICT}
)
select 's' as kind, id, attempts from started union all select 'x' as kind, id, 0 from suppressed`;
