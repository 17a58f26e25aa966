import type { Kysely, Selectable } from 'kysely';
import type { Segment } from '../../../core/segments.ts';
import type { CampaignChanges } from '../../../core/storage/campaigns.ts';
import type { Campaign, CampaignStatus } from '../../../core/types.ts';
import { flagColumn, flagOf, layoutColumn, layoutOf, parseJson, toDate } from '../../rows.ts';
import type { CampaignsTable, Database } from '../../schema.ts';

type Row = Selectable<CampaignsTable> & { list_name: string | null };

/** campaigns with the name of their list, the shape toCampaign reads */
export const campaignsWithList = (db: Kysely<Database>) =>
  db.selectFrom('notify_campaigns').leftJoin('notify_lists', 'notify_lists.id', 'notify_campaigns.list_id').selectAll('notify_campaigns').select('notify_lists.name as list_name');

export const campaignRow = (db: Kysely<Database>, id: number) => campaignsWithList(db).where('notify_campaigns.id', '=', id).executeTakeFirst();

/** the campaign as it is stored now (after a write this call made, so it exists) */
export const campaignById = async (db: Kysely<Database>, id: number) => toCampaign((await campaignRow(db, id))!);

export function toCampaign(row: Row): Campaign {
  return {
    id: Number(row.id),
    name: row.name,
    subject: row.subject,
    html: row.html,
    markdown: row.markdown,
    markdown_file: row.markdown_file,
    text: row.text,
    layout: layoutOf(row.layout),
    list: row.list_name,
    from_name: row.from_name,
    from_email: row.from_email,
    data: parseJson(row.data),
    headers: parseJson(row.headers) as Record<string, string>,
    segment: row.segment === null ? null : (parseJson(row.segment) as Segment),
    status: row.status as CampaignStatus,
    created_at: toDate(row.created_at)!,
    sent_at: toDate(row.sent_at),
    send_at: toDate(row.send_at),
    status_reason: row.status_reason ?? null,
    track_opens: flagOf(row.track_opens),
    track_clicks: flagOf(row.track_clicks),
  };
}

/** The columns of an update: JSON fields as text, the layout as its column form. */
export function changeColumns(changes: CampaignChanges) {
  const { data, headers, layout, segment, track_opens, track_clicks, ...rest } = changes;
  return {
    ...rest,
    ...(track_opens !== undefined ? { track_opens: flagColumn(track_opens) } : {}),
    ...(track_clicks !== undefined ? { track_clicks: flagColumn(track_clicks) } : {}),
    ...(data !== undefined ? { data: JSON.stringify(data) } : {}),
    ...(headers !== undefined ? { headers: JSON.stringify(headers) } : {}),
    ...(layout !== undefined ? { layout: layoutColumn(layout) } : {}),
    ...(segment !== undefined ? { segment: segment === null ? null : JSON.stringify(segment) } : {}),
  };
}
