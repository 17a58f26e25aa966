import { setTimeout as sleep } from 'node:timers/promises';

/** Handles keeping the process alive (sockets, servers, ref'd timers), counted by kind. */
export function handles(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) if (kind !== 'TTYWrap' && kind !== 'FSReqCallback') out[kind] = (out[kind] ?? 0) + 1;
  return out;
}

/** The handles once they equal `expected`, or as they are after `ms` (sockets close a tick or two after close()). */
export async function settlesTo(expected: Record<string, number>, ms = 2000): Promise<Record<string, number>> {
  const until = Date.now() + ms;
  let now = handles();
  while (JSON.stringify(now) !== JSON.stringify(expected) && Date.now() < until) {
    await sleep(20);
    now = handles();
  }
  return now;
}

/** The handles once nothing has opened or closed for `stillMs` (what earlier work left is done closing). */
export async function quiet(stillMs = 200, maxMs = 3000): Promise<Record<string, number>> {
  const until = Date.now() + maxMs;
  let last = handles();
  while (Date.now() < until) {
    await sleep(stillMs);
    const now = handles();
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  return last;
}
