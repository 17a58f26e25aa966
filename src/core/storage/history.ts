/** What the contact's timeline reads: the person's sends, events and status changes, newest first. */
export interface HistorySendRow {
  id: number;
  campaign_id: number | null;
  /** the campaign's name, or its subject when unnamed */
  campaign: string | null;
  /** the drip sequence of a step's send */
  sequence: string | null;
  subject: string;
  status: string;
  error: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface HistoryEventRow {
  /** open | click | soft_bounce | bounce | complaint | unsubscribe */
  type: string;
  campaign_id: number | null;
  campaign: string | null;
  link_index: number | null;
  machine_reason: string | null;
  is_machine: boolean;
  /** where an unsubscribe came from, or the provider of a bounce or complaint */
  source: string | null;
  created_at: number;
}

export interface HistoryStatusRow {
  /** null: the contact's own status; else the list whose membership changed */
  list: string | null;
  from_status: string | null;
  to_status: string;
  created_at: number;
}

export interface HistoryRepo {
  /** the newest `limit` of each kind for the contact */
  forContact(contactId: number, limit: number): Promise<{ sends: HistorySendRow[]; events: HistoryEventRow[]; changes: HistoryStatusRow[] }>;
}
