import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeSegment, encodeSegment, keepMappings } from '../scripts/test-source-maps.mjs';

describe('scripts/test-source-maps.mjs', () => {
  test('a mapping encodes and decodes to the same fields, negative and past one digit included', () => {
    for (const fields of [[0], [0, 0, 0, 0], [1, -1, 15, -16], [16, 1000, -1000, 123456, -7]]) {
      assert.deepEqual(decodeSegment(encodeSegment(fields)), fields);
    }
    assert.equal(encodeSegment([0, 0, 0, 0]), 'AAAA');
    assert.equal(encodeSegment([16]), 'gB');
    assert.throws(() => decodeSegment('A!'), /not a source map digit/);
  });

  test("keeps the mappings into the project's sources at the same places, ends a kept run where a dropped one starts, drops lines of packages", () => {
    // source 0 is ours, source 1 a package's; fields are [column, source, line, column] as absolutes
    const absolute = [
      [
        [0, 0, 0, 0],
        [10, 1, 5, 2],
        [20, 0, 1, 4],
      ],
      [[0, 1, 6, 0]],
      [
        [2, 0, 3, 0],
        [8, 1, 7, 1],
      ],
    ];
    const encode = (lines: number[][][]) => {
      const prev = [0, 0, 0];
      return lines
        .map((line) => {
          let col = 0;
          return line
            .map(([c, ...rest]) => {
              const out = [c - col, ...rest.map((v, i) => v - prev[i])];
              col = c;
              rest.forEach((v, i) => {
                prev[i] = v;
              });
              return encodeSegment(out);
            })
            .join(',');
        })
        .join(';');
    };
    const kept = keepMappings(encode(absolute), (source: number) => source === 1);
    // decoded back: the package's mappings are gone, a source-less one at column 10 and 8 ends ours
    const lines = kept.split(';').map((l: string) => (l ? l.split(',').map(decodeSegment) : []));
    assert.equal(lines.length, 3);
    assert.deepEqual(lines[1], []);
    assert.deepEqual(lines[0], [[0, 0, 0, 0], [10], [10, 0, 1, 4]]);
    assert.deepEqual(lines[2], [[2, 0, 2, -4], [6]]);
  });
});
