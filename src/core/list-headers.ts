import type { Config } from '../config.ts';

/** What kind of message a Feedback-ID describes. */
export type MessageKind = 'campaign' | 'drip' | 'send' | 'optin';

export interface HeaderSource {
  kind: MessageKind;
  /** the campaign's or the sequence's id */
  id?: number | null;
  /** the campaign's list */
  list?: string | null;
}

/**
 * List-Id (RFC 2919) for a campaign to a list, and Feedback-ID (Gmail's feedback loop) from the
 * `feedbackId` template: `{kind}` (campaign, drip, send, optin), `{id}` (campaign or sequence id)
 * and `{list}` are filled in, every other character is kept. Values are plain ASCII, so the
 * header lines stay short and signable.
 */
export function listHeaders(config: Pick<Config, 'listIdDomain' | 'feedbackId'>, source: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  if (config.listIdDomain && source.list) out['List-Id'] = `<${listLabel(source.list)}.${config.listIdDomain}>`;
  if (config.feedbackId) {
    const values: Record<string, string> = { kind: source.kind, id: source.id == null ? '' : String(source.id), list: source.list ? listLabel(source.list) : '' };
    out['Feedback-ID'] = config.feedbackId.replace(/\{(kind|id|list)\}/g, (_, name: string) => values[name]);
  }
  return out;
}

/** A list name as a dot-atom label: lower-case letters, digits and hyphens (`Spring Readers!` -> `spring-readers`). */
export function listLabel(name: string): string {
  return (
    name
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'list'
  );
}
