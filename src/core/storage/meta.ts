export interface MetaRepo {
  get(key: string): Promise<string | undefined>;
  /** returns the stored value, storing `value` first when the key is new (first writer wins) */
  getOrSet(key: string, value: string): Promise<string>;
}
