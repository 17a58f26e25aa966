import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';

export const MEMBERSHIP_STATUSES = ['subscribed', 'unsubscribed'] as const;
export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number];

export interface List {
  id: number;
  name: string;
  description: string | null;
  /** a public capture form may join it */
  public: boolean;
  /** members whose membership is `subscribed` (whatever their contact's status) */
  subscribers: number;
  created_at: Date;
}

export interface ListInput {
  name: string;
  description?: string | null;
  public?: boolean;
}

export interface ListsService {
  create(input: ListInput): Promise<List>;
  list(): Promise<List[]>;
  delete(name: string): Promise<void>;
}

/** The same names capture accepts: letters and digits first, then also spaces and _ . : - */
const LIST_NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.:-]{0,99}$/u;
const MAX_DESCRIPTION = 1000;

export function checkListName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !LIST_NAME.test(name)) {
    throw new NotifyError('INVALID_INPUT', 'A list name must be 1 to 100 letters, digits, spaces or _ . : - (starting with a letter or digit)', { field });
  }
  return name;
}

/** The list of that name in any case, or NOT_FOUND. */
export async function requireList(ctx: Pick<Context, 'store'>, name: unknown, field = 'list') {
  if (typeof name !== 'string' || name.length === 0 || name.length > 100) throw new NotifyError('INVALID_INPUT', 'A list name must be 1 to 100 characters', { field });
  const list = await ctx.store.lists.byName(name);
  if (!list) throw new NotifyError('NOT_FOUND', `No list named ${JSON.stringify(name)}`, { field, list: name });
  return list;
}

export function createListsService(ctx: Pick<Context, 'store' | 'clock'>): ListsService {
  return {
    async create(input) {
      if (typeof input !== 'object' || input === null) throw new NotifyError('INVALID_INPUT', 'lists.create() needs an object');
      const name = checkListName(input.name);
      const description = input.description ?? null;
      if (description !== null && (typeof description !== 'string' || description.length > MAX_DESCRIPTION)) {
        throw new NotifyError('INVALID_INPUT', `A list description must be text of at most ${MAX_DESCRIPTION} characters`, { field: 'description' });
      }
      if (input.public !== undefined && typeof input.public !== 'boolean') throw new NotifyError('INVALID_INPUT', 'public must be true or false', { field: 'public' });
      const list = await ctx.store.lists.create({ name, description, public: input.public === true }, ctx.clock.now());
      if (!list) throw new NotifyError('DUPLICATE', `A list named ${JSON.stringify(name)} already exists (names are unique whatever their case)`, { field: 'name' });
      return list;
    },
    list: () => ctx.store.lists.all(),
    async delete(name) {
      const list = await requireList(ctx, name, 'name');
      const campaigns = await ctx.store.lists.campaignsUsing(list.id);
      // Deleting it would turn those campaigns into campaigns to everyone.
      if (campaigns > 0) throw new NotifyError('INVALID_INPUT', `List ${JSON.stringify(list.name)} is the audience of ${campaigns} campaign(s) and cannot be deleted`, { field: 'name' });
      await ctx.store.lists.delete(list.id);
    },
  };
}
