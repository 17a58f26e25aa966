import type { Generated } from 'kysely';

// The people: contacts, lists and memberships, the status changes triggers write, and the tombstones of erased contacts.

export interface ContactsTable {
  id: Generated<number>;
  email: string;
  /** email lower-cased in JS (full Unicode); the unique key for case-insensitive lookups */
  email_key: string;
  name: string | null;
  status: string;
  unsubscribe_token: string;
  attributes: string | Record<string, unknown>;
  consent_at: number | null;
  consent_source: string | null;
  consent_ip: string | null;
  confirm_token_hash: string | null;
  /** when the current double opt-in link was issued, so it expires */
  confirm_sent_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ListsTable {
  id: Generated<number>;
  /** unique whatever the case (checked on write: see repos/lists.ts) */
  name: string;
  description: Generated<string | null>;
  /** 1 when a public capture form may join it */
  public: Generated<number>;
  created_at: number;
}

export interface ListMembersTable {
  list_id: number;
  contact_id: number;
  /** when the contact joined */
  created_at: number;
  /** subscribed | unsubscribed (migration 008; earlier members are subscribed) */
  status: Generated<string>;
  unsubscribed_at: Generated<number | null>;
}

export interface TombstonesTable {
  token_hash: string;
  email_hash: string;
  status: string;
  created_at: number;
}

/** a contact's or a membership's status change, written by triggers (migration 012) */
export interface StatusChangesTable {
  id: Generated<number>;
  contact_id: number;
  /** null: the contact's own status; else the membership of that list */
  list_id: number | null;
  /** null: a membership that did not exist before */
  from_status: string | null;
  to_status: string;
  created_at: number;
}
