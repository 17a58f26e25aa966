import type { List, MembershipStatus } from '../lists.ts';

export interface ListRow {
  id: number;
  name: string;
  public: boolean;
}
/** One list as the preference centre shows it to a member. */
export interface Membership {
  id: number;
  name: string;
  description: string | null;
  public: boolean;
  /** null: never a member (a public list they may join) */
  status: MembershipStatus | null;
}

export interface ListsRepo {
  /** undefined when a list of that name exists in any case */
  create(input: { name: string; description: string | null; public: boolean }, now: number): Promise<List | undefined>;
  all(): Promise<List[]>;
  /** by name in any case (the exact spelling first, for lists created before names were unique in any case) */
  byName(name: string): Promise<ListRow | undefined>;
  /** whether a campaign sends to it (such a list cannot be deleted) */
  campaignsUsing(listId: number): Promise<number>;
  delete(listId: number): Promise<void>;
  /** sets the contact's membership of the list (a row is created when missing) */
  setMembership(listId: number, contactId: number, status: MembershipStatus, now: number): Promise<void>;
  /** subscribed -> unsubscribed; true when this call changed it (of concurrent calls exactly one) */
  leave(listId: number, contactId: number, now: number): Promise<boolean>;
  /** names of the lists each contact left (membership `unsubscribed`), by contact id */
  leftBy(contactIds: number[]): Promise<Map<number, string[]>>;
  /** the lists the contact is or was a member of, and every public list, by name */
  membershipsOf(contactId: number): Promise<Membership[]>;
}
