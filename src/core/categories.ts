import { isSuppressedStatus } from './types.ts';

/**
 * What a message is: `marketing` (the default) honours every opt-out; `transactional` (receipts,
 * password resets) is not a subscription, so it reaches an unsubscribed contact, but never one
 * whose address bounces or who complained, and carries no List-Unsubscribe headers.
 */
export const SEND_CATEGORIES = ['marketing', 'transactional'] as const;
export type SendCategory = (typeof SEND_CATEGORIES)[number];

const UNDELIVERABLE: readonly string[] = ['bounced', 'complained'];

/** whether a contact of this status must not get a message of this category */
export function isLeftOut(status: string, category: SendCategory = 'marketing'): boolean {
  return category === 'transactional' ? UNDELIVERABLE.includes(status) : isSuppressedStatus(status);
}
