import { NotifyError } from '../errors.ts';

/**
 * Segments: JSON filters over contacts. This file holds their grammar and its validation; the
 * store compiles a validated segment to SQL (store/segments.ts) with every value bound as a
 * parameter. Anything outside the grammar is INVALID_INPUT naming the path of the offending part.
 */
export type AttrValue = string | number | boolean;

export type Segment =
  | { all: Segment[] }
  | { any: Segment[] }
  | { not: Segment }
  | { attr: string; eq: AttrValue }
  | { attr: string; ne: AttrValue }
  | { attr: string; in: AttrValue[] }
  | { attr: string; contains: string }
  | { attr: string; gt: number | string }
  | { attr: string; lt: number | string }
  | { attr: string; exists: boolean }
  | { list: string }
  | { opened: number; humanOnly?: boolean }
  | { clicked: number; humanOnly?: boolean }
  | { createdAfter: string }
  | { createdBefore: string };

/** The validated form the store compiles. */
export type SegmentNode =
  | { kind: 'all' | 'any'; of: SegmentNode[] }
  | { kind: 'not'; of: SegmentNode }
  | { kind: 'attr'; name: string; op: 'eq' | 'ne'; value: AttrValue }
  | { kind: 'attr'; name: string; op: 'contains'; value: string }
  | { kind: 'attr'; name: string; op: 'in'; value: AttrValue[] }
  | { kind: 'attr'; name: string; op: 'gt' | 'lt'; value: number | string }
  | { kind: 'attr'; name: string; op: 'exists'; value: boolean }
  | { kind: 'list'; name: string }
  | { kind: 'opened' | 'clicked'; campaignId: number; humanOnly: boolean }
  | { kind: 'created'; op: 'after' | 'before'; at: number };

export const SEGMENT_LIMITS = { depth: 32, nodes: 200, string: 1000, inValues: 100 } as const;

const ATTR_OPS = ['eq', 'ne', 'in', 'contains', 'gt', 'lt', 'exists'] as const;
/** Attribute names as capture stores them, plus unicode letters; never a quote or backslash (JSON paths). */
const ATTR_NAME = /^[\p{L}\p{N}_][\p{L}\p{N}_. -]{0,63}$/u;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

const bad = (path: string, message: string) => new NotifyError('INVALID_INPUT', `${path}: ${message}`, { field: path });

/** Accepts the filter as an object or as its JSON text (CLI, HTTP). */
export function parseSegment(input: unknown, path = 'segment'): SegmentNode {
  let value = input;
  if (typeof input === 'string') {
    if (input.length > SEGMENT_LIMITS.string * SEGMENT_LIMITS.nodes) throw bad(path, 'is too long');
    try {
      value = JSON.parse(input);
    } catch {
      throw bad(path, 'is not valid JSON');
    }
  }
  const budget = { nodes: 0 };
  return node(value, path, 0, budget);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function node(v: unknown, path: string, depth: number, budget: { nodes: number }): SegmentNode {
  if (depth >= SEGMENT_LIMITS.depth) throw bad(path, `nests deeper than ${SEGMENT_LIMITS.depth} levels`);
  if (++budget.nodes > SEGMENT_LIMITS.nodes) throw bad(path, `a segment has at most ${SEGMENT_LIMITS.nodes} filters`);
  if (!isObject(v)) throw bad(path, 'must be a filter object');
  const keys = Object.keys(v);
  if ('all' in v || 'any' in v) {
    const kind = 'all' in v ? 'all' : 'any';
    only(v, path, [kind]);
    const list = v[kind];
    if (!Array.isArray(list) || list.length === 0) throw bad(`${path}.${kind}`, 'must be a non-empty array of filters');
    return { kind, of: list.map((f, i) => node(f, `${path}.${kind}[${i}]`, depth + 1, budget)) };
  }
  if ('not' in v) {
    only(v, path, ['not']);
    return { kind: 'not', of: node(v.not, `${path}.not`, depth + 1, budget) };
  }
  if ('attr' in v) return attr(v, path);
  if ('list' in v) {
    only(v, path, ['list']);
    return { kind: 'list', name: text(v.list, `${path}.list`) };
  }
  if ('opened' in v || 'clicked' in v) {
    const kind = 'opened' in v ? 'opened' : 'clicked';
    only(v, path, [kind, 'humanOnly']);
    const id = v[kind];
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw bad(`${path}.${kind}`, 'must be a campaign id');
    if (v.humanOnly !== undefined && typeof v.humanOnly !== 'boolean') throw bad(`${path}.humanOnly`, 'must be true or false');
    return { kind, campaignId: id, humanOnly: v.humanOnly === true };
  }
  if ('createdAfter' in v || 'createdBefore' in v) {
    const key = 'createdAfter' in v ? 'createdAfter' : 'createdBefore';
    only(v, path, [key]);
    const at = v[key];
    const ms = typeof at === 'string' && ISO_TIME.test(at) ? Date.parse(at) : Number.NaN;
    if (Number.isNaN(ms)) throw bad(`${path}.${key}`, 'must be an ISO 8601 time such as 2026-01-31T00:00:00Z');
    return { kind: 'created', op: key === 'createdAfter' ? 'after' : 'before', at: ms };
  }
  throw bad(path, keys.length ? `unknown filter ${JSON.stringify(keys[0].slice(0, 40))}` : 'is an empty filter');
}

function only(v: Record<string, unknown>, path: string, allowed: string[]): void {
  for (const k of Object.keys(v)) if (!allowed.includes(k)) throw bad(path, `unknown key ${JSON.stringify(k.slice(0, 40))} beside ${allowed[0]}`);
}

function text(v: unknown, path: string): string {
  if (typeof v !== 'string' || v.length === 0) throw bad(path, 'must be a non-empty string');
  return limited(v, path);
}

/** Bounded, and without NUL, which no stored attribute can hold (PostgreSQL text and jsonb refuse it). */
function limited(v: string, path: string): string {
  if (v.length > SEGMENT_LIMITS.string) throw bad(path, `must be at most ${SEGMENT_LIMITS.string} characters`);
  if (v.includes('\u0000')) throw bad(path, 'must not contain a NUL character');
  return v;
}

function scalar(v: unknown, path: string): AttrValue {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw bad(path, 'must be a finite number');
    return v;
  }
  if (typeof v === 'string') return limited(v, path);
  throw bad(path, 'must be a string, number or boolean');
}

function attr(v: Record<string, unknown>, path: string): SegmentNode {
  const ops = Object.keys(v).filter((k) => k !== 'attr');
  for (const k of ops) if (!(ATTR_OPS as readonly string[]).includes(k)) throw bad(path, `unknown key ${JSON.stringify(k.slice(0, 40))}: use one of ${ATTR_OPS.join(', ')}`);
  if (ops.length !== 1) throw bad(path, `an attr filter needs exactly one of ${ATTR_OPS.join(', ')}`);
  const name = v.attr;
  if (typeof name !== 'string' || !ATTR_NAME.test(name)) throw bad(`${path}.attr`, 'must be an attribute name of 1 to 64 letters, digits, spaces or _ . -');
  const op = ops[0] as (typeof ATTR_OPS)[number];
  const at = `${path}.${op}`;
  const value = v[op];
  switch (op) {
    case 'eq':
    case 'ne':
      return { kind: 'attr', name, op, value: scalar(value, at) };
    case 'contains':
      return { kind: 'attr', name, op, value: text(value, at) };
    case 'in': {
      if (!Array.isArray(value) || value.length === 0 || value.length > SEGMENT_LIMITS.inValues) throw bad(at, `must be an array of 1 to ${SEGMENT_LIMITS.inValues} values`);
      return { kind: 'attr', name, op, value: value.map((x, i) => scalar(x, `${at}[${i}]`)) };
    }
    case 'gt':
    case 'lt': {
      const s = scalar(value, at);
      if (typeof s === 'boolean') throw bad(at, 'must be a number or a string');
      return { kind: 'attr', name, op, value: s };
    }
    case 'exists':
      if (typeof value !== 'boolean') throw bad(at, 'must be true or false');
      return { kind: 'attr', name, op, value };
  }
}

/** The list names and campaign ids a segment refers to (each must exist). */
export function segmentReferences(n: SegmentNode, out = { lists: new Set<string>(), campaigns: new Set<number>() }) {
  if (n.kind === 'all' || n.kind === 'any') for (const c of n.of) segmentReferences(c, out);
  else if (n.kind === 'not') segmentReferences(n.of, out);
  else if (n.kind === 'list') out.lists.add(n.name);
  else if (n.kind === 'opened' || n.kind === 'clicked') out.campaigns.add(n.campaignId);
  return out;
}
