import type { Generated } from 'kysely';
import type { ContentColumns } from './campaigns.ts';

// Drip sequences, their steps and enrollments.

export interface SequencesTable {
  id: Generated<number>;
  name: string;
  /** the list whose joiners the sequence enrols by itself */
  trigger_list_id: number | null;
  created_at: number;
}

export interface StepsTable extends ContentColumns {
  id: Generated<number>;
  sequence_id: number;
  position: number;
  delay_minutes: number;
  created_at: number;
}

export interface EnrollmentsTable {
  id: Generated<number>;
  sequence_id: number;
  contact_id: number;
  /** active | processing | completed | failed | cancelled */
  status: string;
  step_index: number;
  next_send_at: number | null;
  attempts: number;
  locked_at: number | null;
  claim_token: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}
