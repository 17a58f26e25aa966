/**
 * Writes items as they arrive, in groups: the first item after a quiet spell waits `windowMs` for
 * company, and while a write is in progress the next group collects. One write at a time, in
 * order. A crash loses only what arrived in the last few milliseconds.
 */
export interface GroupWriter<T> {
  add(item: T): void;
  /** throws the first failed write (callers stop when their database does); later items are dropped */
  check(): void;
  /** writes what is waiting and resolves once every write is done; throws the first failed write */
  drain(): Promise<void>;
}

export function createGroupWriter<T>(write: (group: T[]) => Promise<void>, windowMs: number): GroupWriter<T> {
  let buffer: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  const pump = async () => {
    while (buffer.length > 0 && !failure) {
      const group = buffer;
      buffer = [];
      try {
        await write(group);
      } catch (error) {
        failure = { error };
      }
    }
    running = undefined;
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    // pump() reaches its first await before returning (the buffer is not empty), so `running` is
    // set before pump can clear it
    if (!running && buffer.length > 0) running = pump();
  };
  const check = () => {
    if (failure) throw failure.error;
  };
  return {
    add(item) {
      if (failure) return;
      buffer.push(item);
      if (!running && !timer) timer = setTimeout(flush, windowMs);
    },
    check,
    async drain() {
      flush();
      while (running) await running;
      check();
    },
  };
}
