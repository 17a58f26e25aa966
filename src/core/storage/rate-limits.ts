export interface RateLimitsRepo {
  /**
   * Counts one hit on `bucket` in one atomic statement: a window starts at the first hit and lasts
   * `windowMs`; a hit after it ends starts a new one. Returns the hits so far and when the window ends.
   */
  hit(bucket: string, windowMs: number, now: number): Promise<{ hits: number; resetAt: number }>;
  /** deletes windows that have ended; returns how many */
  purge(now: number): Promise<number>;
}
