/**
 * When a group writer writes next: at once (an urgent or full group), or at the end of the window
 * from the first item, or sooner when a flush(withinMs) asked for it. One wake-up at a time.
 */
export function createGroupWake(fire: () => void, windowMs: number) {
  let urgent = false;
  /** the earliest time a caller of flush(withinMs) wants what is waiting written */
  let due = Number.POSITIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** when the timer fires (performance.now() time) */
  let timerAt = 0;
  /** an urgent write waits only for the callbacks of this turn of the event loop, which join it */
  let immediate: ReturnType<typeof setImmediate> | undefined;
  return {
    /** a caller waits for what is waiting: at once, or within `withinMs` */
    ask(withinMs?: number) {
      if (withinMs === undefined) urgent = true;
      else due = Math.min(due, performance.now() + withinMs);
    },
    arm(full: boolean) {
      if (urgent || full) immediate ??= setImmediate(fire);
      else {
        const at = Math.min(due, timer === undefined ? performance.now() + windowMs : timerAt);
        if (timer !== undefined && at >= timerAt) return;
        clearTimeout(timer);
        timerAt = at;
        timer = setTimeout(fire, Math.max(0, at - performance.now()));
      }
    },
    cancel() {
      clearTimeout(timer);
      clearImmediate(immediate);
      timer = immediate = undefined;
    },
    /** a write took what was waiting: what callers asked of it is answered */
    taken() {
      urgent = false;
      due = Number.POSITIVE_INFINITY;
    },
  };
}
