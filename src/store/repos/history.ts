import type { Kysely } from 'kysely';
import type { HistoryRepo } from '../../core/storage/history.ts';
import { parseJson } from '../rows.ts';
import type { Database } from '../schema.ts';

const nullableNumber = (v: number | string | null) => (v === null ? null : Number(v));

/** The contact's status changes with the list's name (the caller orders them). */
export const statusChangesOf = (db: Kysely<Database>, contactId: number) =>
  db
    .selectFrom('notify_status_changes as h')
    .leftJoin('notify_lists as l', 'l.id', 'h.list_id')
    .select(['l.name as list', 'h.from_status', 'h.to_status', 'h.created_at', 'h.id'])
    .where('h.contact_id', '=', contactId);

/** Three reads by contact, each on an index that starts with contact_id, newest first. */
export function createHistoryRepo(db: Kysely<Database>): HistoryRepo {
  return {
    async forContact(contactId, limit) {
      const sends = await db
        .selectFrom('notify_sends as s')
        .leftJoin('notify_campaigns as c', 'c.id', 's.campaign_id')
        .leftJoin('notify_enrollments as e', 'e.id', 's.enrollment_id')
        .leftJoin('notify_sequences as q', 'q.id', 'e.sequence_id')
        .select(['s.id', 's.campaign_id', 'c.name as campaign_name', 'c.subject as campaign_subject', 'q.name as sequence', 's.subject', 's.status', 's.error', 's.created_at', 's.sent_at'])
        .where('s.contact_id', '=', contactId)
        .orderBy('s.created_at', 'desc')
        .orderBy('s.id', 'desc')
        .limit(limit)
        .execute();
      const events = await db
        .selectFrom('notify_events as v')
        .leftJoin('notify_campaigns as c', 'c.id', 'v.campaign_id')
        .select(['v.type', 'v.campaign_id', 'c.name as campaign_name', 'c.subject as campaign_subject', 'v.link_index', 'v.is_machine', 'v.machine_reason', 'v.metadata', 'v.created_at'])
        .where('v.contact_id', '=', contactId)
        .orderBy('v.created_at', 'desc')
        .orderBy('v.id', 'desc')
        .limit(limit)
        .execute();
      const changes = await statusChangesOf(db, contactId)
        .orderBy('h.created_at', 'desc')
        .orderBy('h.id', 'desc')
        .limit(limit)
        .execute();
      return {
        sends: sends.map((s) => ({
          id: Number(s.id),
          campaign_id: nullableNumber(s.campaign_id),
          campaign: s.campaign_name || s.campaign_subject || null,
          sequence: s.sequence ?? null,
          subject: s.subject,
          status: s.status,
          error: s.error,
          created_at: Number(s.created_at),
          sent_at: nullableNumber(s.sent_at),
        })),
        events: events.map((v) => {
          const meta = parseJson(v.metadata);
          const source = meta.source ?? meta.provider;
          return {
            type: v.type,
            campaign_id: nullableNumber(v.campaign_id),
            campaign: v.campaign_name || v.campaign_subject || null,
            link_index: nullableNumber(v.link_index),
            is_machine: Number(v.is_machine) === 1,
            machine_reason: v.machine_reason,
            source: typeof source === 'string' ? source : null,
            created_at: Number(v.created_at),
          };
        }),
        changes: changes.map((h) => ({ list: h.list ?? null, from_status: h.from_status, to_status: h.to_status, created_at: Number(h.created_at) })),
      };
    },
  };
}
