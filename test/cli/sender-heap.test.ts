import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SENDER_HEAP_GROWTH_PERCENT, senderHeapFlag } from '../../src/cli/sender-heap.ts';

const churn = fileURLToPath(new URL('../fixtures/heap-churn.ts', import.meta.url));

async function largestOldSpace(nodeFlags: string[]): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, '--import', 'tsx', churn], { timeout: 60_000 });
  return (JSON.parse(stdout.trim()) as { oldSpaceMB: number }).oldSpaceMB;
}

test('the senders bound the heap growth unless node was started with a growth of its own', () => {
  assert.equal(senderHeapFlag([]), `--heap-growing-percent=${SENDER_HEAP_GROWTH_PERCENT}`);
  assert.equal(senderHeapFlag(['--enable-source-maps']), `--heap-growing-percent=${SENDER_HEAP_GROWTH_PERCENT}`);
  for (const own of ['--heap-growing-percent=0', '--heap-growing-percent', '--heap_growing_percent=80']) assert.equal(senderHeapFlag([own]), undefined, own);
});

test('bounded, promoted garbage is collected near the live heap; with V8 left to grow (the operator\'s 0) it is not', async () => {
  // ~40 MB live (the live set and the ring); garbage promoted through the run, ~600 MB of it
  const [bounded, own] = await Promise.all([largestOldSpace([]), largestOldSpace(['--heap-growing-percent=0'])]);
  assert.ok(bounded < 120, `old space reached ${bounded.toFixed(0)} MB with the bound`);
  // the control: the same churn grows V8's own heap past that, so the bound is what keeps it down
  assert.ok(own > 150, `old space reached only ${own.toFixed(0)} MB without the bound`);
});
