/** An event row as written (open, click, soft_bounce, bounce, complaint, unsubscribe). */
export interface EventRow {
  type: string;
  send_id: number | null;
  contact_id: number | null;
  campaign_id: number | null;
  link_index: number | null;
  metadata?: Record<string, unknown>;
  /** 1 when classified as a machine (proxy, scanner), 0 for a human */
  is_machine: number;
  machine_reason: string | null;
  created_at: number;
}

export interface EventsRepo {
  /**
   * One multi-row INSERT. A row naming a send but no contact gets the send's contact (a person's
   * events are found by contact alone); rows of a contact erased meanwhile are not stored.
   */
  insertMany(rows: EventRow[]): Promise<void>;
}
