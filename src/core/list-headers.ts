import type { Config } from '../config.ts';
import { sendUnsubscribeToken } from './tokens.ts';

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

/**
 * RFC 2369 / RFC 8058 one-click headers for one send. The URL is the short form
 * `<host>/notify/u/<28-character token>` so that, folded onto a line of its own, the header keeps
 * within 78 characters for a host of up to 37 characters (`https://news.example.com`); a longer
 * host gives one longer line, never broken inside the URL (see src/mail/header-fold.ts).
 * `fallbackUrl` (the long form) is used for a send id too large for the short token.
 */
export function listUnsubscribeHeaders(host: string, secret: string, sendId: number, fallbackUrl: string): Record<string, string> {
  const token = sendUnsubscribeToken(secret, sendId);
  return {
    'List-Unsubscribe': `<${token ? `${host}/notify/u/${token}` : fallbackUrl}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}

/** The longest host (trackingHost, else baseUrl) whose short List-Unsubscribe line fits 78 characters. */
export const MAX_FOLDABLE_HOST = 78 - ' <'.length - '/notify/u/'.length - 28 - '>'.length;
