import type { SegmentNode } from '../segments.ts';
import type { Contact, ContactStatus, RecipientContact } from '../types.ts';

export interface ContactWrite {
  email: string;
  email_key: string;
  name?: string | null;
  attributes?: Record<string, unknown>;
  status?: ContactStatus;
  /** status for a contact created now, when no explicit status is given */
  initialStatus: ContactStatus;
  /** statuses of an existing contact replaced by initialStatus when no explicit status is given */
  lift?: readonly ContactStatus[];
  unsubscribe_token: string;
  lists?: string[];
  consent?: { at: number; source: string | null; ip: string | null };
  /** a double opt-in link that was emailed (hash of its token, when it was sent) */
  confirmation?: { tokenHash: string; at: number };
}

/** Which contacts contacts.list and contacts.count look at; every part narrows. */
export interface ContactFilter {
  /** subscribed to the list of that name */
  list?: string;
  status?: ContactStatus;
  /** already lower-cased: a part of the email or the name, as plain text */
  search?: string;
  segment?: SegmentNode;
}

/** One contact as the CSV export writes it. */
export interface ExportRow {
  id: number;
  email: string;
  name: string | null;
  status: ContactStatus;
  created_at: Date;
  attributes: Record<string, unknown>;
  lists: string[];
}

export interface ExportFilter {
  list?: number;
  status?: ContactStatus;
}

/** Everything stored about one person (GDPR access); see core/person-data.ts for the public shape. */
export interface PersonRows {
  contact: Record<string, unknown>;
  lists: Record<string, unknown>[];
  sends: Record<string, unknown>[];
  events: Record<string, unknown>[];
  enrollments: Record<string, unknown>[];
  /** the contact's and their memberships' status changes, with the list's name */
  statusChanges: Record<string, unknown>[];
}

export interface ContactsRepo {
  /** a page in id order after `afterId` */
  page(filter: ContactFilter, afterId: number, limit: number): Promise<Contact[]>;
  count(filter: ContactFilter): Promise<number>;
  /**
   * Inserts or updates by email_key, in one transaction; attributes merge, lists are added; the status
   * changes only when given, or when the stored one is in `lift`.
   */
  upsert(input: ContactWrite, now: number): Promise<Contact>;
  /** several upserts in one transaction (an import batch); all land or none do */
  upsertMany(inputs: ContactWrite[], now: number): Promise<void>;
  /** the contacts of the given email keys that exist, by email key */
  getManyByEmailKey(emailKeys: string[]): Promise<Map<string, Contact>>;
  /** the status each erased address had, by email hash (the latest erasure of an address) */
  tombstonesForEmails(emailHashes: string[]): Promise<Map<string, string>>;
  getById(id: number): Promise<Contact | undefined>;
  getByEmailKey(emailKey: string): Promise<Contact | undefined>;
  getByUnsubscribeToken(token: string): Promise<Contact | undefined>;
  /** the status the address had when it was erased, if it was erased */
  tombstoneForToken(tokenHash: string): Promise<{ status: string } | undefined>;
  tombstoneForEmail(emailHash: string): Promise<{ status: string } | undefined>;
  setStatus(id: number, status: ContactStatus, now: number): Promise<void>;
  /** sets status unless the contact already has it; true when this call changed it (race-free "first one wins") */
  changeStatus(id: number, status: ContactStatus, now: number): Promise<boolean>;
  /** what delivery needs of several contacts at once (drip runs), by id */
  recipients(ids: number[]): Promise<Map<number, RecipientContact>>;
  /** statuses of the given email keys that exist (suppression check at dispatch) */
  statusesByEmailKey(keys: string[]): Promise<Map<string, { id: number; status: string }>>;
  /** deletes the person's data, keeping only hashes (tombstone) and anonymous send rows for campaign totals */
  erase(id: number, emailHash: string, now: number): Promise<boolean>;
  /** every stored row that names the person (GDPR access) */
  exportPerson(id: number): Promise<PersonRows | undefined>;
  /** one keyset page of contacts for the CSV export */
  exportPage(after: number, limit: number, filter: ExportFilter): Promise<{ rows: ExportRow[]; next?: number }>;
  listId(name: string): Promise<number | undefined>;
}
