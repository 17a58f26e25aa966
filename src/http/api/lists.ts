
import type { ApiRoute, JsonSchema } from './route.ts';
import { getOne, ref } from './route.ts';
import { arrayOf, bool, dateTime, input, int, nullable, record, str, text } from './schemas.ts';

export const listSchemas: Record<string, JsonSchema> = {
  List: record({
    id: int,
    name: str,
    description: nullable(str),
    public: { ...bool, description: 'a public capture form may join it' },
    subscribers: { ...int, description: 'members whose membership is subscribed' },
    created_at: dateTime,
  }),
};

export const listRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/lists',
    operationId: 'listLists',
    tag: 'lists',
    summary: 'Every list with its subscriber count',
    responses: { 200: { description: 'the lists', schema: record({ lists: arrayOf(ref('List')) }) } },
    handle: async ({ deps }) => ({ body: { lists: await deps.notify.lists.list() } }),
  },
  {
    method: 'post',
    path: '/lists',
    operationId: 'createList',
    tag: 'lists',
    summary: 'Create a list (names are unique whatever their case)',
    body: { schema: input({ name: text(100), description: nullable(text(1000)), public: bool }, ['name']) },
    responses: { 201: { description: 'the new list', schema: ref('List') } },
    problems: [409, 422],
    handle: async ({ deps, body }) => ({ status: 201, body: await deps.notify.lists.create(body as { name: string }) }),
  },
  getOne(
    { path: '/lists/{name}', operationId: 'getList', tag: 'lists', summary: 'One list with its subscriber count' },
    { name: 'name', description: 'the list name, any case' },
    { description: 'the list', schema: ref('List') },
    async (deps, name) => (await deps.notify.lists.list()).find((l) => l.name.toLowerCase() === name.toLowerCase()),
    (name) => `No list named ${JSON.stringify(name)}`,
  ),
  {
    method: 'delete',
    path: '/lists/{name}',
    operationId: 'deleteList',
    tag: 'lists',
    summary: 'Delete a list (refused while a campaign targets it)',
    params: { name: { description: 'the list name, any case' } },
    responses: { 204: { description: 'deleted' } },
    problems: [404, 422],
    handle: async ({ deps, params }) => {
      await deps.notify.lists.delete(params.name);
      return { status: 204 };
    },
  },
];
