import type { Config } from '../config.ts';
import { FEEDBACK_ID_MAX, HEADER_LINE, LIST_LABEL_MIN, shortLabel } from './header-limits.ts';
import { SEND_UNSUBSCRIBE_TOKEN_LENGTH, sendUnsubscribeToken } from './tokens.ts';

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
 * and `{list}` are filled in, every other character is kept. Values are plain ASCII without white
 * space, so each goes whole on one line: a list label too long for that line is cut (shortLabel),
 * and the options are checked at start so that the rest always fits (header-limits.ts).
 */
export function listHeaders(config: Pick<Config, 'listIdDomain' | 'feedbackId'>, source: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  const label = source.list ? listLabel(source.list) : '';
  if (config.listIdDomain && source.list) {
    out['List-Id'] = `<${shortLabel(label, HEADER_LINE - ' <.>'.length - config.listIdDomain.length)}.${config.listIdDomain}>`;
  }
  if (config.feedbackId) {
    const values = { kind: source.kind, id: source.id == null ? '' : String(source.id), list: label };
    let value = fillFeedbackId(config.feedbackId, values);
    const lists = config.feedbackId.match(/\{list\}/g)?.length ?? 0;
    if (value.length > FEEDBACK_ID_MAX && lists > 0) {
      const room = Math.floor((FEEDBACK_ID_MAX - fillFeedbackId(config.feedbackId, { ...values, list: '' }).length) / lists);
      value = fillFeedbackId(config.feedbackId, { ...values, list: shortLabel(label, Math.max(room, LIST_LABEL_MIN)) });
    }
    out['Feedback-ID'] = value;
  }
  return out;
}

function fillFeedbackId(template: string, values: Record<string, string>): string {
  return template.replace(/\{(kind|id|list)\}/g, (_, name: string) => values[name]);
}

/**
 * Why a `feedbackId` template can make a value longer than a line, or undefined: checked with the
 * longest kind and id and the shortest a list label is cut to.
 */
export function feedbackIdProblem(template: string): string | undefined {
  const worst = fillFeedbackId(template, { kind: 'campaign', id: String(Number.MAX_SAFE_INTEGER), list: 'l'.repeat(LIST_LABEL_MIN) });
  if (worst.length <= FEEDBACK_ID_MAX) return undefined;
  return `can make a Feedback-ID of ${worst.length} characters (a 16-digit {id}, {kind} campaign, {list} cut to ${LIST_LABEL_MIN}); at most ${FEEDBACK_ID_MAX} fit a 78-character header line`;
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
 * `<host>/notify/u/<24-character token>` so that, on a line of its own, the header keeps within 78
 * characters unfolded for a host (trackingHost, else baseUrl) of up to MAX_FOLDABLE_HOST (41)
 * characters (`https://newsletter.news-example.co.uk`). A longer host's URL is folded inside its
 * angle brackets by the header writer, before the token while the rest fits a line (mail/header-fold.ts).
 * `fallbackUrl` (the long form) is used for a send id too large for the short token.
 */
export function listUnsubscribeHeaders(host: string, secret: string, sendId: number, fallbackUrl: string): Record<string, string> {
  const token = sendUnsubscribeToken(secret, sendId);
  return {
    'List-Unsubscribe': `<${token ? `${host}/notify/u/${token}` : fallbackUrl}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}

/** The longest host (trackingHost, else baseUrl) whose short List-Unsubscribe URL fits a 78-character line unfolded. */
export const MAX_FOLDABLE_HOST = HEADER_LINE - ' <'.length - '/notify/u/'.length - SEND_UNSUBSCRIBE_TOKEN_LENGTH - '>'.length;
