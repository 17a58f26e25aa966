import type { Kysely, Selectable } from 'kysely';
import type { SequencesRepo } from '../../core/storage/sequences.ts';
import type { Sequence, Step } from '../../core/types.ts';
import { layoutColumn, layoutOf, toDate } from '../rows.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Database, StepsTable } from '../schema.ts';
import { refuseDuplicate } from '../unique.ts';

function toStep(r: Selectable<StepsTable>): Step {
  return {
    id: Number(r.id),
    sequence_id: Number(r.sequence_id),
    position: Number(r.position),
    delay_minutes: Number(r.delay_minutes),
    subject: r.subject,
    html: r.html,
    markdown: r.markdown,
    markdown_file: r.markdown_file,
    text: r.text,
    layout: layoutOf(r.layout),
  };
}

export function createSequencesRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, 'isUniqueViolation'>): SequencesRepo {
  const stepsOf = async (ids: number[]) => {
    const out = new Map<number, Step[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return out;
    const rows = await db.selectFrom('notify_steps').selectAll().where('sequence_id', 'in', ids).orderBy('sequence_id').orderBy('position').execute();
    for (const r of rows) out.get(Number(r.sequence_id))?.push(toStep(r));
    return out;
  };
  const one = async (where: 'id' | 'name', v: number | string): Promise<Sequence | undefined> => {
    const row = await db
      .selectFrom('notify_sequences as s')
      .leftJoin('notify_lists as l', 'l.id', 's.trigger_list_id')
      .select(['s.id', 's.name', 's.created_at', 'l.name as trigger_list'])
      .where(`s.${where}`, '=', v as never)
      .executeTakeFirst();
    if (!row) return undefined;
    const id = Number(row.id);
    const trigger = row.trigger_list === null ? null : { listJoined: row.trigger_list };
    return { id, name: row.name, created_at: toDate(row.created_at)!, steps: (await stepsOf([id])).get(id) ?? [], trigger };
  };
  return {
    async create(name, steps, now, triggerListId = null) {
      const insert = () =>
        db.transaction().execute(async (trx) => {
          const row = await trx.insertInto('notify_sequences').values({ name, trigger_list_id: triggerListId, created_at: now }).returning('id').executeTakeFirstOrThrow();
          const sequenceId = Number(row.id);
          await trx
            .insertInto('notify_steps')
            .values(steps.map((s, position) => ({ ...s, layout: layoutColumn(s.layout), sequence_id: sequenceId, position, created_at: now })))
            .execute();
          return sequenceId;
        });
      const id = await refuseDuplicate(dialect, insert, `A sequence named ${JSON.stringify(name)} already exists`, { field: 'name', name });
      return (await one('id', id))!;
    },
    getById: (id) => one('id', id),
    getByName: (name) => one('name', name),
    stepsOf,
  };
}
