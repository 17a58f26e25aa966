import type { CsvEncoding } from '../../core/csv.ts';
import { CONTACT_STATUSES, type ContactStatus } from '../../core/types.ts';
import type { ApiRoute, JsonSchema } from './route.ts';
import { getOne, ref } from './route.ts';
import { arrayOf, dateTime, int, nullable, record, str, text } from './schemas.ts';

/** A CSV upload over this is refused (413); larger files go through `notify contacts:import`. */
export const MAX_CSV_BYTES = 50 * 1024 * 1024;

export const importSchemas: Record<string, JsonSchema> = {
  ImportJob: record({
    id: str,
    status: { type: 'string', enum: ['running', 'done', 'failed'] },
    created_at: dateTime,
    finished_at: nullable(dateTime),
    bytes_read: int,
    bytes_total: int,
    rows: int,
    created: int,
    updated: int,
    unchanged: int,
    rejected: int,
    rejections: arrayOf(record({ line: int, reason: str }), { description: 'the first 100 rejected rows' }),
    error: nullable(str),
  }),
};

export const importRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/imports',
    operationId: 'startImport',
    tag: 'imports',
    summary: 'Upload a CSV of contacts (the formats contacts:import reads); it is imported in the background',
    description: 'The encoding and the header are checked before the answer; rows are imported afterwards. Poll the job for progress.',
    query: {
      list: { description: 'lists every row joins (repeat for several)', schema: arrayOf(text(100), { maxItems: 20 }) },
      status: { description: 'status of rows without a status cell', schema: { type: 'string', enum: [...CONTACT_STATUSES, 'cleaned'] } },
      encoding: { description: 'utf-8 (default) or latin1', schema: { type: 'string', enum: ['utf-8', 'latin1'] } },
    },
    body: { schema: { type: 'string' }, contentType: 'text/csv', formField: 'file', maxBytes: MAX_CSV_BYTES, description: 'the CSV file, header row first (as the body, or as the `file` field of a form upload)' },
    responses: { 202: { description: 'the job, running', schema: ref('ImportJob') } },
    problems: [422],
    handle: async ({ deps, query, body }) => {
      const status = query.status === 'cleaned' ? 'bounced' : (query.status as ContactStatus | undefined);
      const job = await deps.imports.start(body as Buffer, { lists: query.list as string[] | undefined, status, encoding: query.encoding as CsvEncoding | undefined });
      return { status: 202, body: job, headers: { Location: `/notify/api/v1/imports/${job.id}` } };
    },
  },
  getOne(
    { path: '/imports/{id}', operationId: 'getImport', tag: 'imports', summary: "An import's progress and, once done, its counts and rejected rows" },
    { name: 'id', description: 'the job id from POST /imports' },
    { description: 'the job', schema: ref('ImportJob') },
    (deps, id) => deps.imports.get(id),
    () => 'No such import (jobs are kept by the server that ran them, the last 100)',
  ),
];
