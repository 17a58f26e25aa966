/**
 * Writes items as they arrive, in groups: a group is written `windowMs` after its first item (at
 * once when it reaches `maxGroup`), and items that arrive during a write wait for the next window.
 * One write at a time, in order. A crash loses only what arrived in the last window;
 * a fast sender costs at most one write per window, not one per item.
 */
export interface GroupWriter<T> {
  add(item: T): void;
  /** throws the first failed write (callers stop when their database does); later items are dropped */
  check(): void;
  /** writes what is waiting and resolves once every write is done; throws the first failed write */
  drain(): Promise<void>;
}

export function createGroupWriter<T>(write: (group: T[]) => Promise<void>, windowMs: number, maxGroup = 500): GroupWriter<T> {
  let buffer: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  const schedule = () => {
    if (!timer && !running && buffer.length > 0) timer = setTimeout(flush, buffer.length >= maxGroup ? 0 : windowMs);
  };
  function flush() {
    clearTimeout(timer);
    timer = undefined;
    if (running || buffer.length === 0) return;
    const group = buffer;
    buffer = [];
    running = write(group)
      .catch((error) => {
        failure ??= { error };
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
      if (buffer.length >= maxGroup && timer) flush();
      else schedule();
    },
    check,
    async drain() {
      for (;;) {
        if (running) await running;
        else if (buffer.length > 0 && !failure) flush();
        else break;
      }
      clearTimeout(timer);
      timer = undefined;
      check();
    },
  };
}
