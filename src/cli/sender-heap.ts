import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent, in
 * the processes that send (`notify worker`, notify:send-campaign, notify:process-drips).
 *
 * A sender's live heap is bounded by its chunks (~27 MB whatever the campaign's size), but every
 * message leaves a few KB of short-lived garbage in the old generation (the chunk claimed ahead,
 * pg's parsed rows, the socket's queued writes: they outlive a scavenge or two). V8 sets the next
 * full collection at up to 4 times the live heap on a machine with gigabytes of memory, and raises
 * that factor as it measures its own collections to be fast; so the heap, and the RSS with it,
 * climbed through a long run (30,000 messages: V8's heap 30 -> 120 MB from the first tenth to the
 * last) and fell back only when the process went idle. A fixed factor keeps the next full collection
 * close to the live heap: the RSS stays flat, for a few more (incremental) mark-compacts. 50: at
 * 20,000 messages (loaded) V8's heap peaked at 74 MB with it, 71 MB at 20 and 104 MB without (README).
 */
export const SENDER_HEAP_GROWTH_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/**
 * The flag to set, unless node was started with a growth of its own (`node --heap-growing-percent=N
 * bin/notify.js worker`): an operator's choice wins.
 */
export function senderHeapFlag(execArgv: readonly string[] = process.execArgv): string | undefined {
  if (execArgv.some((a) => a === FLAG || a.startsWith(`${FLAG}=`) || a === '--heap_growing_percent' || a.startsWith('--heap_growing_percent='))) return undefined;
  return `${FLAG}=${SENDER_HEAP_GROWTH_PERCENT}`;
}

/**
 * Bounds the heap's growth for the rest of this process. V8 reads this flag each time it sets the
 * next collection's limit, so setting it at run time takes effect from the next full collection on
 * (the heap's sizes, --max-old-space-size and the semi-space, are fixed at start and cannot be set
 * this way).
 */
export function boundSenderHeap(execArgv: readonly string[] = process.execArgv): void {
  const flag = senderHeapFlag(execArgv);
  if (flag) setFlagsFromString(flag);
}
