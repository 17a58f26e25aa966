// The schema a fresh database gets from the migrations, compared with the one they made before the
// migrations were rewritten to share their column helpers: a migration that already ran somewhere
// must keep creating exactly what it created. Regenerate a fixture only when a new migration adds
// to the schema: NOTIFY_WRITE_SCHEMA=1 with this file.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createStore } from '../../src/store/index.ts';
import { ENGINES, type Engine, freshDatabaseUrl } from '../helpers/engines.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/schema');

/** Every table, column, index and constraint as the engine itself reports it, one a line, sorted. */
async function schemaOf(engine: Engine, db: Kysely<any>): Promise<string> {
  if (engine === 'sqlite') {
    const { rows } = await sql<{ type: string; name: string; sql: string | null }>`select type, name, sql from sqlite_master where name not like 'sqlite_%' order by type, name`.execute(db);
    return rows.map((r) => `${r.type} ${r.name}: ${r.sql ?? '(implicit)'}`).join('\n');
  }
  const columns = await sql<{ line: string }>`
    select table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable || ' default=' || coalesce(column_default, '-') as line
    from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`.execute(db);
  const indexes = await sql<{ line: string }>`
    select 'index ' || indexname || ': ' || replace(indexdef, current_schema() || '.', '') as line
    from pg_indexes where schemaname = current_schema() order by indexname`.execute(db);
  const constraints = await sql<{ line: string }>`
    select 'constraint ' || conrelid::regclass::text || ' ' || conname || ': ' || pg_get_constraintdef(oid) as line
    from pg_constraint where connamespace = current_schema()::regnamespace order by conrelid::regclass::text, conname`.execute(db);
  const triggers = await sql<{ line: string }>`
    select 'trigger ' || event_object_table || ' ' || trigger_name || ' ' || event_manipulation || ' ' || action_statement as line
    from information_schema.triggers where trigger_schema = current_schema() order by 1`.execute(db);
  return [...columns.rows, ...indexes.rows, ...constraints.rows, ...triggers.rows].map((r) => r.line).join('\n');
}

for (const engine of ENGINES) {
  describe(`migrated schema [${engine}]`, () => {
    test('a fresh database gets exactly the schema the migrations have always made', async () => {
      const { url, cleanup } = freshDatabaseUrl(engine);
      const store = createStore(url);
      try {
        await store.migrate();
        // the migrator's own bookkeeping tables are named by the store, not by a migration
        const schema = (await schemaOf(engine, store.db)).replaceAll(/t_[0-9]+_[0-9a-z]+_[0-9]+\./g, '');
        const file = join(FIXTURES, `${engine}.txt`);
        if (process.env.NOTIFY_WRITE_SCHEMA) writeFileSync(file, `${schema}\n`);
        assert.equal(`${schema}\n`, readFileSync(file, 'utf8'));
      } finally {
        if (engine === 'postgres') await store.dialect.destroyData();
        else await store.close();
        cleanup();
      }
    });
  });
}
