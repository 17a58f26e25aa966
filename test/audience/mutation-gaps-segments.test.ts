import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotifyError } from '../../src/errors.ts';
import type { Segment } from '../../src/core/segments.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

/**
 * What contacts.list() answers for a segment beyond what segments.test.ts reads: each refusal's
 * path (its field) and message, the size and depth bounds at the edge, the ISO times accepted, and
 * list and campaign references found inside all/any/not.
 */

forEachEngine('segments: refusals, bounds and references', (h) => {
  const notify = useNotify(h);
  const list = (segment: unknown) => notify().contacts.list({ segment: segment as Segment });
  const emails = async (segment: unknown) => (await list(segment)).contacts.map((c) => c.email);

  /** refused as INVALID_INPUT naming `field`, the message `<field>: <message>` */
  async function refused(segment: unknown, field: string, message: string): Promise<void> {
    await assert.rejects(list(segment), (e: unknown) => {
      assert.ok(e instanceof NotifyError, `a NotifyError, not ${String(e)}`);
      assert.equal(e.code, 'INVALID_INPUT');
      assert.deepEqual(e.details, { field });
      assert.equal(e.message, `${field}: ${message}`);
      return true;
    });
  }

  test('the shape: JSON text, a filter object, known keys, one operator per attribute', async () => {
    await notify().contacts.upsert({ email: 'seg@example.com', attributes: { a: 1 } });
    await refused('{"list":', 'segment', 'is not valid JSON');
    for (const v of [[], 'null', 5, '"text"']) await refused(v, 'segment', 'must be a filter object');
    await refused({}, 'segment', 'is an empty filter');
    await refused({ ['k'.repeat(50)]: 1 }, 'segment', `unknown filter ${JSON.stringify('k'.repeat(40))}`);
    await refused({ all: [] }, 'segment.all', 'must be a non-empty array of filters');
    await refused({ list: 'news', ['x'.repeat(50)]: 1 }, 'segment', `unknown key ${JSON.stringify('x'.repeat(40))} beside list`);
    for (const v of [5, '']) await refused({ list: v }, 'segment.list', 'must be a non-empty string');
    await refused({ not: { attr: '-a', eq: 1 } }, 'segment.not.attr', 'must be an attribute name of 1 to 64 letters, digits, spaces or _ . -');
    await refused({ attr: 5, eq: 1 }, 'segment.attr', 'must be an attribute name of 1 to 64 letters, digits, spaces or _ . -');
    const ops = 'eq, ne, in, contains, gt, lt, exists';
    await refused({ attr: 'a', ['o'.repeat(50)]: 1 }, 'segment', `unknown key ${JSON.stringify('o'.repeat(40))}: use one of ${ops}`);
    await refused({ attr: 'a' }, 'segment', `an attr filter needs exactly one of ${ops}`);
  });

  test('values: strings, finite numbers and booleans, each refusal at its own path', async () => {
    await refused({ attr: 'a', eq: 'x'.repeat(1001) }, 'segment.eq', 'must be at most 1000 characters');
    await refused({ attr: 'a', eq: Number.POSITIVE_INFINITY }, 'segment.eq', 'must be a finite number');
    await refused({ attr: 'a', ne: null }, 'segment.ne', 'must be a string, number or boolean');
    await refused({ attr: 'a', contains: '' }, 'segment.contains', 'must be a non-empty string');
    await refused({ attr: 'a', gt: true }, 'segment.gt', 'must be a number or a string');
    await refused({ attr: 'a', exists: 'yes' }, 'segment.exists', 'must be true or false');
    await refused({ attr: 'a', in: [1, null] }, 'segment.in[1]', 'must be a string, number or boolean');
    const many = (n: number) => Array.from({ length: n }, (_, i) => i);
    await refused({ attr: 'a', in: many(101) }, 'segment.in', 'must be an array of 1 to 100 values');
    assert.deepEqual(await emails({ attr: 'a', in: many(100) }), ['seg@example.com']);
  });

  test('opened/clicked: a campaign id of 1 or more, humanOnly true or false', async () => {
    for (const id of [0, 1.5, '5']) await refused({ opened: id }, 'segment.opened', 'must be a campaign id');
    await refused({ clicked: 1, humanOnly: 'yes' }, 'segment.humanOnly', 'must be true or false');
  });

  test('createdAfter/createdBefore: ISO 8601 text, with or without seconds, fraction and zone', async () => {
    for (const at of [5, '2026-13-45x']) await refused({ createdAfter: at }, 'segment.createdAfter', 'must be an ISO 8601 time such as 2026-01-31T00:00:00Z');
    for (const at of ['2000-01-01T00:00', '2000-01-01T00:00:00.123Z', '2000-01-01T00:00:00.5-05:30', '2000-01-01T00:00+02:00']) {
      assert.deepEqual(await emails({ createdAfter: at }), ['seg@example.com'], at);
    }
    assert.deepEqual(await emails({ createdBefore: '2000-01-01' }), []);
  });

  test('the whole text of at most 200,000 characters; 32 levels; 200 filters', async () => {
    const text = (length: number) => JSON.stringify({ attr: 'a', exists: true }).padEnd(length, ' ');
    assert.deepEqual(await emails(text(200_000)), ['seg@example.com']);
    await refused(text(200_001), 'segment', 'is too long');
    const nested = (levels: number): unknown => (levels === 0 ? { attr: 'a', exists: true } : { all: [nested(levels - 1)] });
    assert.deepEqual(await emails(nested(31)), ['seg@example.com']);
    await refused(nested(32), `segment${'.all[0]'.repeat(32)}`, 'nests deeper than 32 levels');
    const leaves = (n: number) => ({ any: Array.from({ length: n }, () => ({ attr: 'a', exists: true })) });
    assert.deepEqual(await emails(leaves(199)), ['seg@example.com'], '200 filters with the any');
    await refused(leaves(200), 'segment.any[199]', 'a segment has at most 200 filters');
  });

  test('a list or campaign named inside all, any or not must exist', async () => {
    for (const wrap of [(s: unknown) => ({ all: [s] }), (s: unknown) => ({ any: [{ attr: 'a', exists: true }, s] }), (s: unknown) => ({ not: s })]) {
      await assert.rejects(list(wrap({ list: 'nowhere' })), (e: unknown) => e instanceof NotifyError && e.code === 'NOT_FOUND' && e.details?.list === 'nowhere');
      await assert.rejects(list(wrap({ clicked: 999 })), (e: unknown) => e instanceof NotifyError && e.code === 'NOT_FOUND' && e.details?.campaign === 999);
    }
  });
});
