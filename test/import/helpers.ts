import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createContactsService } from '../../src/core/contacts.ts';
import { type ImportOptions, importContacts } from '../../src/core/import.ts';
import type { Notify } from '../../src/notify.ts';

export const FIXTURES = join(import.meta.dirname, 'fixtures');
export const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
export const MAILCHIMP = {
  subscribed: 'subscribed_members_export_2c3a8b1f0e.csv',
  unsubscribed: 'unsubscribed_members_export_2c3a8b1f0e.csv',
  cleaned: 'cleaned_members_export_2c3a8b1f0e.csv',
};

/** Imports CSV text (or bytes) split into small chunks, so records and characters straddle chunk boundaries. */
export function importText(notify: Notify, text: string | Buffer, opts?: ImportOptions) {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
  return importContacts(createContactsService(notify.context), chunks, opts);
}
