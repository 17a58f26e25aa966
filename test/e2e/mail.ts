import type { SinkMessage, SmtpSink } from '../helpers/smtp-sink.ts';
import { waitUntil } from './harness.ts';

/** What a mail client shows a reader: a browser's user agent on every request the test makes for them. */
export const READER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' };

export interface TrackedLink {
  /** the anchor's text, which names the destination the template gave it */
  text: string;
  href: string;
}

const decode = (s: string) => s.replace(/&amp;/g, '&');

/** The click-tracked anchors of a delivered email's HTML part, as a reader would click them. */
export function trackedLinks(message: SinkMessage): TrackedLink[] {
  const html = String(message.parsed.html ?? '');
  return [...html.matchAll(/<a\b[^>]*\bhref="([^"]*\/notify\/click\/[^"]*)"[^>]*>([\s\S]*?)<\/a>/g)].map((m) => ({ href: decode(m[1]), text: m[2].trim() }));
}

/** The src of the open-tracking pixel of a delivered email's HTML part. */
export function pixelUrl(message: SinkMessage): string {
  const m = /<img\b[^>]*\bsrc="([^"]*\/notify\/open\/[^"]*)"/.exec(String(message.parsed.html ?? ''));
  if (!m) throw new Error(`no tracking pixel in the email to ${message.envelope.to}`);
  return decode(m[1]);
}

/** The https URL of the List-Unsubscribe header, unfolded as a mail client reads it. */
export function listUnsubscribeUrl(message: SinkMessage): string {
  const line = message.parsed.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '';
  const m = /<(https?:\/\/[^>]+)>/.exec(line.replace(/\r?\n[ \t]+/g, ''));
  if (!m) throw new Error(`no http List-Unsubscribe header in the email to ${message.envelope.to}: ${line}`);
  return m[1];
}

/** The first address a message was delivered to. */
export const recipient = (m: SinkMessage) => m.envelope.to[0];

/** Waits until the sink holds `count` messages matching `match`; those messages. */
export function delivered(sink: SmtpSink, match: (m: SinkMessage) => boolean, count: number, timeoutMs = 15_000): Promise<SinkMessage[]> {
  return waitUntil(
    () => {
      const found = sink.messages.filter(match);
      return found.length >= count ? found : undefined;
    },
    timeoutMs,
    `${count} matching emails at the SMTP sink`,
  );
}
