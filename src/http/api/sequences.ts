import { listEnrollments } from '../../core/enrollment-list.ts';
import { ENROLLMENT_STATUSES, type EnrollmentStatus } from '../../core/types.ts';
import type { SequenceInput } from '../../core/drips.ts';
import { CAMPAIGN_INPUT } from './campaign-schemas.ts';
import type { ApiDeps, ApiRoute, JsonSchema } from './route.ts';
import { found, getOne, ref } from './route.ts';
import { arrayOf, dateTime, digits, input, int, nullable, record, str, text } from './schemas.ts';

const { subject, html, markdown, markdownFile, text: textBody, layout } = (CAMPAIGN_INPUT.properties ?? {}) as Record<string, JsonSchema>;

export const sequenceSchemas: Record<string, JsonSchema> = {
  Step: record({
    id: int,
    sequence_id: int,
    position: int,
    delay_minutes: int,
    subject: str,
    html: nullable(str),
    markdown: nullable(str),
    markdown_file: nullable(str),
    text: nullable(str),
    layout: layout,
  }),
  Sequence: record({ id: int, name: str, created_at: dateTime, steps: arrayOf(ref('Step')), trigger: nullable(record({ listJoined: str })) }),
  SequenceSummary: record({
    id: int,
    name: str,
    steps: int,
    enrollments: { type: 'object', description: 'enrollments by status, zeros included', properties: Object.fromEntries(ENROLLMENT_STATUSES.map((s) => [s, int])), additionalProperties: int },
    total: int,
  }),
  Enrollment: record({
    id: int,
    sequence_id: int,
    contact_id: int,
    status: { type: 'string', enum: [...ENROLLMENT_STATUSES] },
    step_index: int,
    next_send_at: nullable(dateTime),
    attempts: int,
    last_error: nullable(str),
  }),
};

const step = input({ delayMinutes: { type: 'integer', minimum: 0 }, subject, html, markdown, markdownFile, text: textBody, layout }, ['delayMinutes', 'subject']);
const sequenceParam = { sequence: { description: 'sequence id or name' } };

const sequence = async (deps: ApiDeps, idOrName: string) => found(await deps.notify.drips.getSequence(idOrName), `Sequence ${JSON.stringify(idOrName)} not found`, 'sequence');

export const sequenceRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/sequences',
    operationId: 'listSequences',
    tag: 'sequences',
    summary: 'Every drip sequence with its step count and enrollments by status',
    responses: { 200: { description: 'the sequences', schema: record({ sequences: arrayOf(ref('SequenceSummary')) }) } },
    handle: async ({ deps }) => ({ body: { sequences: await deps.stats.listSequences() } }),
  },
  {
    method: 'post',
    path: '/sequences',
    operationId: 'createSequence',
    tag: 'sequences',
    summary: 'Create a drip sequence (every step checked like a campaign)',
    body: { schema: input({ name: text(200), steps: arrayOf(step, { minItems: 1, maxItems: 100 }), trigger: nullable(input({ listJoined: text(100) }, ['listJoined'])) }, ['name', 'steps']) },
    responses: { 201: { description: 'the new sequence', schema: ref('Sequence') } },
    problems: [409, 422],
    handle: async ({ deps, body }) => ({ status: 201, body: await deps.notify.drips.createSequence(body as SequenceInput) }),
  },
  {
    method: 'get',
    path: '/sequences/{sequence}',
    operationId: 'getSequence',
    tag: 'sequences',
    summary: 'One sequence with its steps',
    params: sequenceParam,
    responses: { 200: { description: 'the sequence', schema: ref('Sequence') } },
    problems: [404],
    handle: async ({ deps, params }) => ({ body: await sequence(deps, params.sequence) }),
  },
  {
    method: 'post',
    path: '/sequences/{sequence}/enrollments',
    operationId: 'enrollContact',
    tag: 'sequences',
    summary: 'Enroll a contact (a suppressed contact or a second enrollment is 409)',
    params: sequenceParam,
    body: { schema: input({ contact: { anyOf: [{ type: 'integer', minimum: 1 }, text(320)], description: 'contact id or email address' } }, ['contact']) },
    responses: { 201: { description: 'the enrollment', schema: ref('Enrollment') } },
    problems: [404, 409, 422],
    handle: async ({ deps, params, body }) => {
      const seq = await sequence(deps, params.sequence);
      return { status: 201, body: await deps.notify.drips.enroll({ contact: (body as { contact: number | string }).contact, sequence: seq.id }) };
    },
  },
  {
    method: 'get',
    path: '/sequences/{sequence}/enrollments',
    operationId: 'listEnrollments',
    tag: 'sequences',
    summary: "A page of the sequence's enrollments in id order, optionally of one status",
    params: sequenceParam,
    query: {
      status: { description: 'only enrollments with this status', schema: { type: 'string', enum: [...ENROLLMENT_STATUSES] } },
      after: { description: 'the `next` cursor of the previous page', schema: text(40) },
      limit: { description: 'enrollments per page, 1 to 1000 (default 50)', schema: digits },
    },
    responses: { 200: { description: 'one page', schema: record({ enrollments: arrayOf(ref('Enrollment')), next: nullable(str) }) } },
    problems: [404],
    handle: async ({ deps, params, query: q }) => {
      const seq = await sequence(deps, params.sequence);
      const page = await listEnrollments(deps.ctx, seq.id, {
        status: q.status as EnrollmentStatus | undefined,
        after: (q.after as string | undefined) ?? null,
        limit: q.limit === undefined ? undefined : Number(q.limit),
      });
      return { body: page };
    },
  },
  getOne(
    { path: '/enrollments/{id}', operationId: 'getEnrollment', tag: 'sequences', summary: 'One enrollment: its status, step and next send time' },
    { name: 'id', description: 'enrollment id', schema: digits },
    { description: 'the enrollment', schema: ref('Enrollment') },
    (deps, id) => (/^[0-9]{1,15}$/.test(id) ? deps.notify.drips.getEnrollment(Number(id)) : undefined),
    (id) => `Enrollment ${JSON.stringify(id)} not found`,
  ),
];
