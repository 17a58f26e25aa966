/** The most timestamps in any window of `windowMs` (sliding, half-open [t, t + windowMs)). */
export function busiestWindow(times: readonly number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Messages per second from the first timestamp to the last. */
export function rateOf(times: readonly number[]): number {
  return (times.length - 1) / ((Math.max(...times) - Math.min(...times)) / 1000);
}
