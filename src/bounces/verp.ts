/**
 * The VERP return path: every send leaves with envelope sender `bounces+<send token>@<bounceDomain>`,
 * so a bounce or a feedback report that comes back to (or quotes) that address names its send.
 */

const PREFIX = 'bounces';
// Send tokens are 22 base64url characters (core/tokens.ts); anything else is not one of ours.
const VERP = /\bbounces\+([A-Za-z0-9_-]{22})@([A-Za-z0-9.-]+)/gi;

/** The envelope sender (SMTP MAIL FROM) for the send with this token. */
export function verpAddress(token: string, bounceDomain: string): string {
  return `${PREFIX}+${token}@${bounceDomain}`;
}

/**
 * The send token in a header or field value that holds our VERP address for `bounceDomain`
 * (`<bounces+TOKEN@domain>`, `rfc822; bounces+TOKEN@domain`, `Name <...>`); the domain compares
 * case-insensitively, the token exactly (it is case-sensitive).
 */
export function verpToken(value: string | undefined, bounceDomain: string): string | undefined {
  if (!value) return undefined;
  const domain = bounceDomain.toLowerCase().replace(/\.$/, '');
  for (const m of value.matchAll(VERP)) {
    if (m[2]!.toLowerCase().replace(/\.$/, '') === domain) return m[1];
  }
  return undefined;
}
