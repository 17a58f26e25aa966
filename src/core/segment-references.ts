import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { type SegmentNode, segmentReferences } from './segments.ts';

/** A segment naming a list or a campaign that does not exist is NOT_FOUND, naming it. */
export async function requireReferences(ctx: Pick<Context, 'store'>, segment: SegmentNode): Promise<void> {
  const { lists, campaigns } = segmentReferences(segment);
  for (const name of lists) {
    if (!(await ctx.store.lists.byName(name))) throw new NotifyError('NOT_FOUND', `The segment names a list that does not exist: ${JSON.stringify(name)}`, { field: 'segment', list: name });
  }
  for (const id of campaigns) {
    if (!(await ctx.store.campaigns.getById(id))) throw new NotifyError('NOT_FOUND', `The segment names a campaign that does not exist: ${id}`, { field: 'segment', campaign: id });
  }
}
