import type { Context } from '../../context.ts';
import { exportContactsCsv } from '../../core/export.ts';
import { CONTACT_STATUSES } from '../../core/types.ts';
import type { ApiRoute } from './route.ts';
import { text } from './schemas.ts';
import { API_HEADERS } from './router.ts';

/**
 * GET /contacts/export.csv: the same CSV as `notify contacts:export`, streamed a page at a time.
 * The first line is produced before the response starts, so an unknown list or a bad status is
 * still answered as a problem rather than as a broken download.
 */
export const contactsCsv: ApiRoute = {
  method: 'get',
  path: '/contacts/export.csv',
  operationId: 'exportContactsCsv',
  tag: 'contacts',
  summary: 'Contacts as CSV (email,name,status,lists,created_at,attributes...), the format contacts:import reads back',
  query: {
    list: { description: 'only members of this list', schema: text(100) },
    status: { description: 'only contacts with this status', schema: { type: 'string', enum: [...CONTACT_STATUSES] } },
  },
  responses: { 200: { description: 'CSV with a header row', contentType: 'text/csv', schema: { type: 'string' } } },
  problems: [404, 422],
  handle: ({ deps, query }) => contactsCsvResponse(deps.ctx, { list: query.list as string | undefined, status: query.status as string | undefined }, API_HEADERS),
};

/** The export as a streamed download; the console's export link answers with the same. */
export async function contactsCsvResponse(ctx: Context, filter: { list?: string; status?: string }, headers: Record<string, string>): Promise<Response> {
    const lines = exportContactsCsv(ctx, filter);
    let next = await lines.next();
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (next.done) return controller.close();
        controller.enqueue(encoder.encode(next.value));
        next = await lines.next();
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    return new Response(stream, { headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': 'attachment; filename="contacts.csv"', ...headers } });
}
