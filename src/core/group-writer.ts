import { createGroupWake } from './group-wake.ts';

/**
 * Writes items as they arrive, in groups: a group is written `windowMs` after its first item (at
 * once when it reaches `maxGroup`, or when a caller must wait for it: `flush`), and items that
 * arrive during a write wait for the next one. One write at a time, in order. A crash loses only
 * what arrived in the last window; a fast sender costs at most one write per window, not one per
 * item, and callers that flush together share one write (group commit).
 */
export interface GroupWriter<T> {
  add(item: T): void;
  /** throws the first failed write (callers stop when their database does); later items are dropped */
  check(): void;
  /**
   * writes what is waiting without waiting for the window (or within `withinMs`, when others may
   * join first); resolves once that write is done, throws if it failed
   */
  flush(withinMs?: number): Promise<void>;
  /** writes what is waiting and resolves once every write is done; throws the first failed write */
  drain(): Promise<void>;
}

interface Pending {
  done: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function pending(): Pending {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // a write nobody waits for reports its failure through check()
  done.catch(() => {});
  return { done, resolve, reject };
}

export function createGroupWriter<T>(write: (group: T[]) => Promise<void>, windowMs: number, maxGroup = 500): GroupWriter<T> {
  let buffer: T[] = [];
  /** the write that will take what is in the buffer now */
  let next = pending();
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  const wake = createGroupWake(flush, windowMs);
  const schedule = () => {
    if (running || buffer.length === 0) return;
    wake.arm(buffer.length >= maxGroup);
  };
  function flush() {
    wake.cancel();
    if (running || buffer.length === 0) return;
    const group = buffer;
    const settled = next;
    buffer = [];
    next = pending();
    wake.taken();
    running = write(group)
      .then(settled.resolve, (error) => {
        failure ??= { error };
        settled.reject(error);
      })
      .finally(() => {
        running = undefined;
        schedule();
      });
  }
  const check = () => {
    if (failure) throw failure.error;
  };
  return {
    add(item) {
      if (failure) return;
      buffer.push(item);
      schedule();
    },
    check,
    flush(withinMs) {
      if (failure) return Promise.reject(failure.error);
      if (buffer.length === 0) return running ?? Promise.resolve();
      wake.ask(withinMs);
      schedule();
      return next.done;
    },
    async drain() {
      for (;;) {
        if (running) await running;
        else if (buffer.length > 0 && !failure) flush();
        else break;
      }
      wake.cancel();
      check();
    },
  };
}
