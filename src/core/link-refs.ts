import { hmac, safeEqual } from './tokens.ts';

/**
 * Click URLs are `{tracking_host}/notify/click/<sendToken>?l=<scope>.<index>.<sig>`.
 *
 * - scope names the compiled message the links belong to: `c<campaignId>` for a campaign,
 *   `s<stepId>` for a drip step, `m<sendId>` for a one-off `notify.send`.
 * - index is the link's position in that message's link list (table notify_links).
 * - sig = HMAC(secret, `<sendToken>:<scope>`), computed once per recipient (not per link) so the
 *   per-recipient render stays cheap. It proves the email sent under this token was of this scope,
 *   so a link from another send, a tampered scope or a forged token fails without a query; the
 *   destination then comes from the scope's own link list, never from the request.
 */
export const LINK_SIG_BYTES = 12;

export type LinkScope = `${'c' | 's' | 'm'}${number}`;

export function scopeSignature(secret: string, sendToken: string, scope: string): string {
  return hmac(secret, `${sendToken}:${scope}`, LINK_SIG_BYTES);
}

export function linkRef(scope: string, index: number, sig: string): string {
  return `${scope}.${index}.${sig}`;
}

export interface ParsedLinkRef {
  scope: LinkScope;
  index: number;
  sig: string;
}

const REF = /^([csm][0-9]{1,15})\.([0-9]{1,4})\.([A-Za-z0-9_-]{16})$/;

export function parseLinkRef(ref: string | undefined | null): ParsedLinkRef | undefined {
  if (typeof ref !== 'string') return undefined;
  const m = REF.exec(ref);
  if (!m) return undefined;
  return { scope: m[1] as LinkScope, index: Number(m[2]), sig: m[3] };
}

export function verifyLinkRef(secret: string, sendToken: string, ref: ParsedLinkRef): boolean {
  return safeEqual(scopeSignature(secret, sendToken, ref.scope), ref.sig);
}
