import { createHash } from 'node:crypto';

/**
 * The longest values notify puts into header values that have no white space to fold at (RFC 5322
 * 2.2.3 folds only before white space; a msg-id, the `<...>` of List-Id, a DKIM `d=` and a Feedback-ID
 * have none). Each is measured on a line of its own after a fold right after the colon, so that
 * every header line stays within 78 characters; an option that could make a longer one is refused
 * at start (CONFIG_INVALID) instead of being written.
 */
export const HEADER_LINE = 78;
/** send tokens (core/tokens.ts newToken) are the id-left of every Message-ID */
const SEND_TOKEN = 22;

/** `Message-ID: <token@domain>` with its own line ` <token@domain>`: the From domain it takes (52) */
export const MESSAGE_ID_DOMAIN_MAX = HEADER_LINE - ' <@>'.length - SEND_TOKEN;
/** `From: Name <address>`: the address on its own line ` <address>` (75) */
export const FROM_ADDRESS_MAX = HEADER_LINE - ' <>'.length;
/** a list label never shortened below this: 7 characters of the name, a hyphen and a 6-character hash */
export const LIST_LABEL_MIN = 14;
/** `List-Id: <label.listIdDomain>` with its own line, room left for a label of LIST_LABEL_MIN (60) */
export const LIST_ID_DOMAIN_MAX = HEADER_LINE - ' <.>'.length - LIST_LABEL_MIN;
/** a Feedback-ID value on its own line (77) */
export const FEEDBACK_ID_MAX = HEADER_LINE - ' '.length;
/**
 * `Return-Path: <bounces+<send token>@bounceDomain>`: a receiving server writes it above the
 * message on one line, unfolded (Debian's Postfix, virtual delivery, does), so the domain it takes
 * is measured on the field's first line (32)
 */
export const BOUNCE_DOMAIN_MAX = HEADER_LINE - 'Return-Path: <bounces+@>'.length - SEND_TOKEN;
/** `DKIM-Signature:` tags on their own line ` d=<domain>;` (74) */
export const DKIM_TAG_MAX = HEADER_LINE - ' d=;'.length;

/**
 * Why an address (domain already punycode) cannot be a From address within 78-character lines, or
 * undefined when it can. The Message-ID is `<send token@the From domain>`.
 */
export function fromAddressProblem(address: string): string | undefined {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  if (domain.length > MESSAGE_ID_DOMAIN_MAX) {
    return `has a domain of ${domain.length} characters; at most ${MESSAGE_ID_DOMAIN_MAX} fit the Message-ID <${'t'.repeat(SEND_TOKEN)}@domain> on a 78-character header line`;
  }
  if (address.length > FROM_ADDRESS_MAX) return `is ${address.length} characters long; at most ${FROM_ADDRESS_MAX} fit the From header's <address> on a 78-character line`;
  return undefined;
}

/**
 * A label cut to `max` characters: a long one keeps its first characters and gets a hash of the
 * whole, so two long list names that begin alike still get different List-Ids.
 */
export function shortLabel(label: string, max: number): string {
  if (label.length <= max) return label;
  const hash = createHash('sha256').update(label).digest('hex').slice(0, 6);
  return `${label.slice(0, Math.max(1, max - hash.length - 1)).replace(/-+$/, '')}-${hash}`;
}
