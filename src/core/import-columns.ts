import { NotifyError } from '../errors.ts';
import { CONTACT_STATUSES, type ContactStatus } from './types.ts';

/**
 * Which column of an import file means what. Headers are compared by their clean key (see
 * cleanKey), so `Email Address`, `EMAIL_ADDRESS` and `email address` are one column.
 */
const EMAIL = ['email', 'email_address', 'e_mail', 'e_mail_address'];
const NAME = ['name', 'full_name'];
const FIRST = ['first_name', 'fname', 'firstname', 'given_name'];
const LAST = ['last_name', 'lname', 'lastname', 'surname', 'family_name'];
const LISTS = ['tags', 'lists'];
const STATUS = ['status'];
/** notify's own export writes it; notify sets it, a file does not */
const IGNORED = ['created_at'];

/**
 * Mailchimp's export is three files of the same shape; the unsubscribed and cleaned ones are told
 * apart by the columns they add (UNSUB_TIME, CLEAN_TIME).
 */
const STATUS_BY_COLUMN: [string, ContactStatus][] = [
  ['clean_time', 'bounced'],
  ['unsub_time', 'unsubscribed'],
];

/** Status words other tools write, mapped to notify's (Mailchimp's cleaned = hard bounced). */
const STATUS_WORDS: Record<string, ContactStatus> = { cleaned: 'bounced', unsubscribe: 'unsubscribed', active: 'subscribed', confirmed: 'subscribed' };

export interface ColumnPlan {
  email: number;
  name?: number;
  first?: number;
  last?: number;
  lists?: number;
  status?: number;
  /** the status every row of this file has unless its own status cell says otherwise */
  fileStatus?: ContactStatus;
  attributes: { index: number; key: string }[];
  width: number;
}

/** `Phone Number` -> `phone_number`, `OPTIN_TIME` -> `optin_time`, `firstName` -> `first_name`. */
export function cleanKey(header: string): string {
  return header
    .trim()
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

export function planColumns(header: string[], status?: ContactStatus): ColumnPlan {
  const keys = header.map(cleanKey);
  const find = (names: string[]) => {
    const i = keys.findIndex((k) => names.includes(k));
    return i === -1 ? undefined : i;
  };
  const email = find(EMAIL);
  if (email === undefined) {
    throw new NotifyError('INVALID_INPUT', `The CSV header has no email column (one of: ${EMAIL.join(', ')}; found: ${keys.join(', ') || 'nothing'})`, { header });
  }
  const plan: ColumnPlan = { email, name: find(NAME), first: find(FIRST), last: find(LAST), lists: find(LISTS), status: find(STATUS), attributes: [], width: header.length };
  plan.fileStatus = status ?? STATUS_BY_COLUMN.find(([column]) => keys.includes(column))?.[1];
  const used = new Set([plan.email, plan.name, plan.first, plan.last, plan.lists, plan.status]);
  keys.forEach((key, index) => {
    if (!used.has(index) && key !== '' && !IGNORED.includes(key)) plan.attributes.push({ index, key });
  });
  return plan;
}

/** A status cell as notify's status; empty is undefined; anything else unknown is an error. */
export function parseStatus(cell: string): ContactStatus | undefined {
  const word = cell.trim().toLowerCase();
  if (word === '') return undefined;
  if ((CONTACT_STATUSES as readonly string[]).includes(word)) return word as ContactStatus;
  if (STATUS_WORDS[word]) return STATUS_WORDS[word];
  throw new NotifyError('INVALID_INPUT', `Unknown status "${cell.trim().slice(0, 40)}" (expected ${CONTACT_STATUSES.join(', ')} or cleaned)`, { field: 'status' });
}
