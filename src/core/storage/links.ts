/** The destinations of a compiled message, by scope (see core/link-refs.ts). */
export interface LinksRepo {
  /** stores the scope's URLs by position; an existing scope keeps what it has (idempotent across runs) */
  ensureScope(scope: string, urls: string[], now: number): Promise<void>;
  urlsForScope(scope: string): Promise<string[]>;
}
