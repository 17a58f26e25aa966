import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createGroupWriter } from '../../src/core/group-writer.ts';

/** a writer whose window never ends within a test: only flushes write */
function recording() {
  const writes: string[][] = [];
  const writer = createGroupWriter<string>(async (group) => void writes.push(group), 60_000);
  return { writes, writer };
}

describe('group writer: a flush with a deadline lets others join the write', () => {
  test('items added before the deadline go out in the same write as the one that asked', async () => {
    const { writes, writer } = recording();
    writer.add('a');
    const written = writer.flush(500);
    await nextTurn();
    writer.add('b');
    await written;
    assert.deepEqual(writes, [['a', 'b']]);
    await writer.drain();
  });

  test('the deadline, not the window, decides when it is written', async () => {
    const { writes, writer } = recording();
    writer.add('a');
    const started = Date.now();
    await writer.flush(20);
    assert.deepEqual(writes, [['a']]);
    assert.ok(Date.now() - started < 30_000, 'written long before the 60 s window');
  });

  test('a sooner deadline, or a flush without one, brings the write forward', async () => {
    const { writes, writer } = recording();
    writer.add('a');
    const late = writer.flush(50_000);
    writer.add('b');
    const soon = writer.flush(10);
    await Promise.all([late, soon]);
    writer.add('c');
    const later = writer.flush(50_000);
    await writer.flush();
    await later;
    assert.deepEqual(writes, [['a', 'b'], ['c']]);
  });

  test('a flush on an empty writer resolves at once; a failed write fails the flushes that waited for it', async () => {
    const writer = createGroupWriter<number>(async () => {
      throw new Error('database gone');
    }, 60_000);
    await writer.flush(10);
    writer.add(1);
    await assert.rejects(writer.flush(10), /database gone/);
    assert.throws(() => writer.check(), /database gone/);
    await assert.rejects(writer.flush(10), /database gone/);
  });
});
