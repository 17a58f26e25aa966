import type { Kysely } from 'kysely';
import type { Store as DomainStore, StoreTx as DomainStoreTx } from '../core/storage/index.ts';
import type { StoreDialect } from './dialect.ts';
import type { MigrateResult } from './migrations/index.ts';
import type { Database } from './schema.ts';

/**
 * The storage contract the domain declares (core/storage/), as this folder implements it: one
 * repository per aggregate in store/repos/, the SQL only below store/, what differs between the
 * engines in the dialect (sqlite/, postgres/). The query builder and migrations are for the
 * repositories, the CLI and tests; the domain uses the repositories.
 */
export interface Store extends DomainStore {
  readonly db: Kysely<Database>;
  readonly dialect: StoreDialect;
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  migrate(): Promise<MigrateResult>;
}

/** The repositories available inside Store.transaction. */
export type StoreTx = DomainStoreTx & { readonly db: Kysely<Database> };
