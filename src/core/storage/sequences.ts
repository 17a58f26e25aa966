import type { Sequence, Step } from '../types.ts';

/** a step as written: its id, sequence and position come from the insert */
export type NewStep = Omit<Step, 'id' | 'sequence_id' | 'position'>;

export interface SequencesRepo {
  /** the sequence and its steps in one transaction; a taken name is DUPLICATE */
  create(name: string, steps: NewStep[], now: number, triggerListId?: number | null): Promise<Sequence>;
  getById(id: number): Promise<Sequence | undefined>;
  getByName(name: string): Promise<Sequence | undefined>;
  /** the steps of several sequences, each list in position order */
  stepsOf(sequenceIds: number[]): Promise<Map<number, Step[]>>;
}
