import { CONTACT_STATUSES } from '../../core/types.ts';
import { NotifyError } from '../../errors.ts';
import { contactsCsv } from './contacts-csv.ts';
import { PERSON_DATA } from './person-schema.ts';
import type { ApiRoute, JsonSchema } from './route.ts';
import { found, ref } from './route.ts';
import { arrayOf, dateTime, digits, freeObject, input, int, nullable, record, str, text } from './schemas.ts';

const status: JsonSchema = { type: 'string', enum: [...CONTACT_STATUSES] };
const listNames = arrayOf(text(100, { minLength: 1 }), { maxItems: 100 });

export const contactSchemas: Record<string, JsonSchema> = {
  Contact: record({
    id: int,
    email: str,
    name: nullable(str),
    status,
    unsubscribe_token: str,
    attributes: freeObject,
    lists: arrayOf(str),
    consent_at: nullable(dateTime),
    consent_source: nullable(str),
    created_at: dateTime,
    updated_at: dateTime,
  }),
  ContactPage: record({ contacts: arrayOf(ref('Contact')), next: { ...nullable(str), description: 'pass as `after` for the next page; null on the last one' } }),
  PersonData: PERSON_DATA,
};

const contactParam = { contact: { description: 'contact id or email address' } };
const filters = {
  list: { description: 'members subscribed to this list', schema: text(100) },
  segment: { description: 'a segment filter as JSON text, e.g. {"attr":"plan","eq":"pro"}', schema: text(16_384) },
};
const contactReply = { description: 'the contact', schema: ref('Contact') };

export const contactRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/contacts',
    operationId: 'listContacts',
    tag: 'contacts',
    summary: 'A page of contacts in id order, filtered and searched',
    query: {
      ...filters,
      status: { description: 'only contacts with this status', schema: status },
      search: { description: 'part of the email address or name, any case', schema: text(200) },
      after: { description: 'the `next` cursor of the previous page', schema: text(40) },
      limit: { description: 'contacts per page, 1 to 1000 (default 50)', schema: digits },
    },
    responses: { 200: { description: 'one page', schema: ref('ContactPage') } },
    problems: [404, 422],
    handle: async ({ deps, query: q }) => ({
      body: await deps.notify.contacts.list({
        list: q.list as string | undefined,
        status: q.status as (typeof CONTACT_STATUSES)[number] | undefined,
        search: q.search as string | undefined,
        segment: q.segment as string | undefined,
        after: (q.after as string | undefined) ?? null,
        limit: q.limit === undefined ? undefined : Number(q.limit),
      }),
    }),
  },
  {
    method: 'get',
    path: '/contacts/count',
    operationId: 'countContacts',
    tag: 'contacts',
    summary: 'How many contacts a list and/or segment holds',
    query: filters,
    responses: { 200: { description: 'the count', schema: record({ count: int }) } },
    problems: [404, 422],
    handle: async ({ deps, query: q }) => ({ body: { count: await deps.notify.contacts.count({ list: q.list as string | undefined, segment: q.segment as string | undefined }) } }),
  },
  contactsCsv,
  {
    method: 'post',
    path: '/contacts',
    operationId: 'createContact',
    tag: 'contacts',
    summary: 'Create a contact (an address that exists already is 409)',
    body: {
      schema: input({ email: text(320), name: nullable(text(200)), lists: listNames, attributes: freeObject, status }, ['email']),
    },
    responses: { 201: { description: 'the new contact', schema: ref('Contact') } },
    problems: [409, 422],
    handle: async ({ deps, body }) => {
      const fields = body as { email: string };
      if (await deps.notify.contacts.get(fields.email)) throw new NotifyError('DUPLICATE', `A contact with the address ${JSON.stringify(fields.email)} exists; change it with PATCH`, { field: 'email' });
      const contact = await deps.notify.contacts.upsert(fields);
      return { status: 201, body: contact, headers: { Location: `/notify/api/v1/contacts/${contact.id}` } };
    },
  },
  {
    method: 'get',
    path: '/contacts/{contact}',
    operationId: 'getContact',
    tag: 'contacts',
    summary: 'One contact',
    params: contactParam,
    responses: { 200: contactReply },
    problems: [404],
    handle: async ({ deps, params }) => ({ body: found(await deps.notify.contacts.get(params.contact), 'No such contact', 'contact') }),
  },
  {
    method: 'patch',
    path: '/contacts/{contact}',
    operationId: 'updateContact',
    tag: 'contacts',
    summary: 'Change the name, merge attributes, join lists, or set the status (an explicit status may lift a suppression)',
    params: contactParam,
    body: { schema: input({ name: nullable(text(200)), lists: listNames, attributes: freeObject, status }, [], { minProperties: 1 }) },
    responses: { 200: contactReply },
    problems: [404, 422],
    handle: async ({ deps, params, body }) => {
      const contact = found(await deps.notify.contacts.get(params.contact), 'No such contact', 'contact');
      return { body: await deps.notify.contacts.upsert({ ...(body as object), email: contact.email }) };
    },
  },
  {
    method: 'delete',
    path: '/contacts/{contact}',
    operationId: 'eraseContact',
    tag: 'contacts',
    summary: "Erase the person's data (their old unsubscribe links then show unsubscribe_expired)",
    params: contactParam,
    responses: { 204: { description: 'erased' } },
    problems: [404],
    handle: async ({ deps, params }) => {
      if (!(await deps.notify.contacts.erase(params.contact))) throw new NotifyError('NOT_FOUND', 'No such contact', { field: 'contact' });
      return { status: 204 };
    },
  },
  {
    method: 'post',
    path: '/contacts/{contact}/subscribe',
    operationId: 'subscribeContact',
    tag: 'contacts',
    summary: 'Join (or rejoin) a list',
    params: contactParam,
    body: { schema: input({ list: text(100) }, ['list']) },
    responses: { 200: contactReply },
    problems: [404, 422],
    handle: async ({ deps, params, body }) => ({ body: await deps.notify.contacts.subscribe(params.contact, (body as { list: string }).list) }),
  },
  {
    method: 'post',
    path: '/contacts/{contact}/unsubscribe',
    operationId: 'unsubscribeContact',
    tag: 'contacts',
    summary: 'Leave one list, or without a list unsubscribe from everything (as the unsubscribe link does)',
    params: contactParam,
    body: { schema: input({ list: text(100) }), optional: true },
    responses: { 200: contactReply },
    problems: [404, 422],
    handle: async ({ deps, params, body }) => ({ body: await deps.notify.contacts.unsubscribe(params.contact, (body as { list?: string }).list) }),
  },
  {
    method: 'get',
    path: '/contacts/{contact}/export',
    operationId: 'exportContact',
    tag: 'contacts',
    summary: 'Everything held on the person: contact, opt-in, lists, sends, events, enrollments (an access request)',
    params: contactParam,
    responses: { 200: { description: "the person's data", schema: ref('PersonData') } },
    problems: [404],
    handle: async ({ deps, params }) => ({ body: found(await deps.notify.contacts.export(params.contact), 'No such contact', 'contact') }),
  },
];
