// notify's own bookkeeping: rate-limit windows, send pacing, settings.

/** fixed-window counters of the database rate-limit store (migration 007) */
export interface RateLimitsTable {
  bucket: string;
  hits: number;
  reset_at: number;
}

export interface SendPacingTable {
  key: string;
  /** epoch microseconds */
  next_us: number;
}

export interface SendPacingTurnsTable {
  key: string;
  turn: string;
  /** epoch ms */
  until: number;
}

export interface MetaTable {
  key: string;
  value: string;
}
