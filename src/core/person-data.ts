import type { Context } from '../context.ts';
import type { ContactsService } from './contacts.ts';
import type { ContactStatus } from './types.ts';

/**
 * Everything notify holds on one person, for an access request. Opt-in history is what is stored:
 * the last consent (when, from where, from which IP) and a pending double opt-in link's issue time;
 * earlier consents are overwritten, not kept.
 */
export interface PersonData {
  contact: { id: number; email: string; name: string | null; status: ContactStatus; attributes: Record<string, unknown>; created_at: Date; updated_at: Date };
  optin: { consent_at: Date | null; consent_source: string | null; consent_ip: string | null; confirmation_sent_at: Date | null };
  /** membership status is present when memberships carry one */
  lists: { name: string; status?: string; joined_at: Date | null }[];
  sends: { id: number; campaign_id: number | null; enrollment_id: number | null; to_email: string; subject: string; status: string; error: string | null; created_at: Date | null; sent_at: Date | null; opened_at: Date | null; clicked_at: Date | null }[];
  events: { type: string; send_id: number | null; campaign_id: number | null; created_at: Date | null; metadata: Record<string, unknown>; is_machine: boolean; machine_reason: string | null }[];
  enrollments: { id: number; sequence: string; status: string; step_index: number; next_send_at: Date | null; created_at: Date | null; updated_at: Date | null }[];
  /** each change of the contact's status (`list` null) and of a list membership, oldest first */
  status_changes: { list: string | null; from: string | null; to: string; at: Date | null }[];
}

type Row = Record<string, unknown>;
const date = (v: unknown) => (v === null || v === undefined ? null : new Date(Number(v)));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const json = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? JSON.parse(v || '{}') : ((v as Record<string, unknown>) ?? {}));

/** The person's data, or undefined when notify holds no contact for that id or address. */
export async function exportPerson(ctx: Pick<Context, 'store'>, contacts: Pick<ContactsService, 'get'>, idOrEmail: number | string): Promise<PersonData | undefined> {
  const found = await contacts.get(idOrEmail);
  const rows = found && (await ctx.store.contacts.exportPerson(found.id));
  if (!found || !rows) return undefined;
  const c = rows.contact;
  return {
    contact: { id: found.id, email: found.email, name: found.name, status: found.status, attributes: found.attributes, created_at: found.created_at, updated_at: found.updated_at },
    optin: { consent_at: date(c.consent_at), consent_source: str(c.consent_source), consent_ip: str(c.consent_ip), confirmation_sent_at: date(c.confirm_sent_at) },
    lists: rows.lists.map((m: Row) => ({ name: String(m.name), ...(m.status !== undefined ? { status: String(m.status) } : {}), joined_at: date(m.created_at) })),
    sends: rows.sends.map((s: Row) => ({
      id: Number(s.id),
      campaign_id: num(s.campaign_id),
      enrollment_id: num(s.enrollment_id),
      to_email: String(s.to_email),
      subject: String(s.subject),
      status: String(s.status),
      error: str(s.error),
      created_at: date(s.created_at),
      sent_at: date(s.sent_at),
      opened_at: date(s.opened_at),
      clicked_at: date(s.clicked_at),
    })),
    events: rows.events.map((e: Row) => ({
      type: String(e.type),
      send_id: num(e.send_id),
      campaign_id: num(e.campaign_id),
      created_at: date(e.created_at),
      metadata: json(e.metadata),
      is_machine: Number(e.is_machine) === 1,
      machine_reason: str(e.machine_reason),
    })),
    enrollments: rows.enrollments.map((e: Row) => ({
      id: Number(e.id),
      sequence: String(e.sequence),
      status: String(e.status),
      step_index: Number(e.step_index),
      next_send_at: date(e.next_send_at),
      created_at: date(e.created_at),
      updated_at: date(e.updated_at),
    })),
    status_changes: rows.statusChanges.map((h: Row) => ({ list: str(h.list), from: str(h.from_status), to: String(h.to_status), at: date(h.created_at) })),
  };
}
