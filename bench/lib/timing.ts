/** Mean microseconds per call of fn over `iterations`, after a warm-up (JIT) of a tenth as many. */
export function microsPerCall(fn: (i: number) => unknown, iterations: number): number {
  let sink = 0;
  for (let i = 0; i < Math.max(200, iterations / 10); i++) sink += size(fn(i));
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) sink += size(fn(i));
  const micros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  if (sink < 0) console.log(sink); // keeps the results alive so the work is not optimised away
  return micros;
}

function size(v: unknown): number {
  return typeof v === 'string' ? v.length : v instanceof Uint8Array ? v.length : 1;
}

/** The median of several samples: benchmarks on 2 shared cores are noisy. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** microsPerCall for a function that returns a promise: each call is awaited before the next starts. */
export async function microsPerCallAsync(fn: (i: number) => Promise<unknown>, iterations: number): Promise<number> {
  let sink = 0;
  for (let i = 0; i < Math.max(200, iterations / 10); i++) sink += size(await fn(i));
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) sink += size(await fn(i));
  const micros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  if (sink < 0) console.log(sink);
  return micros;
}
