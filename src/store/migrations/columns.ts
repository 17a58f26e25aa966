import type { ColumnDataType, CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

// Shapes several migrations create. Each builds exactly the statements the migrations wrote out
// before they shared them, so a migration that already ran elsewhere keeps creating the same
// schema (test/store/migrated-schema.test.ts compares it with what they made).

/** NOT NULL columns, added in the order given: one `.addColumn(name, type, (c) => c.notNull())` each. */
export function required(...columns: [name: string, type: ColumnDataType][]) {
  return <T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, string> =>
    columns.reduce<CreateTableBuilder<T, string>>((t, [name, type]) => t.addColumn(name, type, (c) => c.notNull()), table);
}

/** A table of named things (lists, sequences): an id, a unique name, when it was made. */
export function namedTable(db: Kysely<any>, table: string, { id, pk, ts }: MigrationContext) {
  return db.schema
    .createTable(table)
    .addColumn('id', id, pk)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', ts, (c) => c.notNull());
}

/** A table keyed by two text columns together (`<table>_pk`), with a time. */
export function pairKeyedTable(db: Kysely<any>, table: string, [first, second]: [string, string], time: string, { ts }: MigrationContext) {
  return db.schema
    .createTable(table)
    .$call(required([first, 'text'], [second, 'text'], [time, ts]))
    .addPrimaryKeyConstraint(`${table}_pk`, [first, second]);
}

/** A table keyed by a text column, with a number and a time, and an index on the time (what prunes it). */
export async function prunedTable(db: Kysely<any>, table: string, columns: { key: string; count: string; time: string; index: string }, { ts }: MigrationContext): Promise<void> {
  await db.schema
    .createTable(table)
    .addColumn(columns.key, 'text', (c) => c.primaryKey())
    .$call(required([columns.count, 'integer'], [columns.time, ts]))
    .execute();
  await db.schema.createIndex(columns.index).on(table).column(columns.time).execute();
}
