import { expressionBuilder, sql } from 'kysely';
import { parseSegment, type Segment } from '../core/segments.ts';
import type { StoreDialect } from './dialect.ts';
import type { Database } from './schema.ts';
import { type ContactsScope, segmentCondition } from './segments.ts';

/**
 * A campaign's segment as a condition on the contact `ct` of a send about to start (the alias
 * group-sql.ts stillWanted gives it), in the form of the fixed statements: text with `?`
 * placeholders and its parameters, in order. The send loop's group commit puts it into its one
 * statement (PostgreSQL) or its one write (SQLite) as a text made per run, so a segment campaign's
 * check costs what a list campaign's does (no Kysely transaction, no query built per group).
 */
export interface SegmentPredicate {
  readonly text: string;
  readonly parameters: readonly unknown[];
}

/** per dialect, each segment object's predicate: a run hands every group the same object, so it is compiled once per run */
const compiled = new WeakMap<StoreDialect, WeakMap<object, SegmentPredicate>>();

export function segmentPredicate(dialect: StoreDialect, segment: Segment): SegmentPredicate {
  let bySegment = compiled.get(dialect);
  if (!bySegment) compiled.set(dialect, (bySegment = new WeakMap()));
  let predicate = bySegment.get(segment);
  if (!predicate) bySegment.set(segment, (predicate = compile(dialect, segment)));
  return predicate;
}

function compile(dialect: StoreDialect, segment: Segment): SegmentPredicate {
  // validated at create; parsed again so a stored filter never reaches SQL unchecked
  const node = parseSegment(segment);
  const eb = expressionBuilder<Database, 'notify_contacts'>() as unknown as ContactsScope;
  // its own row of the contact, as `c`: segmentCondition writes `c.`; the primary key finds it
  const query = sql`exists (select 1 from notify_contacts c where c.id = ct.id and ${segmentCondition(eb, dialect, node)})`.compile(dialect.db);
  return { text: questionMarks(query.sql, query.parameters.length), parameters: query.parameters };
}

/**
 * The compiled text with `?` placeholders, as fixed statements are written (PostgreSQL's compiler
 * numbers them `$1`, `$2`, ... in the order of the parameters). Every value is a parameter, so any
 * other `?` or `$n`, or numbers out of order, mean the text cannot be moved into another statement.
 */
function questionMarks(text: string, count: number): string {
  let next = 1;
  const marked = /\$\d/.test(text) && !text.includes('?') ? text.replace(/\$(\d+)/g, (m, n: string) => (Number(n) === next++ ? '?' : m)) : text;
  // a programming error, as fixed-statement.ts withParameters reports its own
  if (marked.split('?').length - 1 !== count || /\$\d/.test(marked)) throw new Error(`a segment condition cannot be moved into a fixed statement: ${count} parameters in ${text}`);
  return marked;
}

/** `make` run once per predicate (statement texts, prepared forms), kept while the predicate is */
export function perPredicate<T>(make: (predicate: SegmentPredicate) => T): (predicate: SegmentPredicate) => T {
  const made = new WeakMap<SegmentPredicate, T>();
  return (predicate) => {
    let value = made.get(predicate);
    if (value === undefined) made.set(predicate, (value = make(predicate)));
    return value;
  };
}
