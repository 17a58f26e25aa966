import type { ComposerFactory, OutgoingMessage, PersonalMessage } from '../core/mailer.ts';
import { joinParts } from '../render/personalize.ts';
import { encodeValues, pushEncoded } from './encoded-parts.ts';
import { assembleInto, framing, headerBlock } from './mime.ts';
import { addressOf } from './smtp.ts';

/**
 * Message assembly: a recipient's message as the domain describes it becomes one complete RFC 5322
 * buffer. The framing (boundary, part headers) is made once per compiled message; per recipient
 * there is one header block, the recipient's values encoded once each, and one copy.
 */
export const composerFor: ComposerFactory = (multipart) => {
  const frame = framing(multipart);
  return (m) => {
    const p = m.content;
    const messageId = `<${m.sendToken}@${domainOf(m.from)}>`;
    const head = headerBlock({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: m.date, messageId, headers: m.headers });
    const textValues = encodeValues(p.recipient, p.textValues);
    const html = p.variant.html;
    const raw = assembleInto(
      head,
      frame,
      (list) => pushEncoded(list, p.variant.text, textValues),
      html && ((list) => pushEncoded(list, html, p.htmlValues === p.textValues ? textValues : encodeValues(p.recipient, p.htmlValues, textValues))),
    );
    return outgoing(m, messageId, raw);
  };
};

/** html and text are joined only if a custom mailer reads them; the built-in ones send `raw`. */
function outgoing(m: PersonalMessage, messageId: string, raw: Buffer): OutgoingMessage {
  const p = m.content;
  let html: string | undefined;
  let text: string | undefined;
  return {
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    subject: m.subject,
    headers: m.headers,
    sendToken: m.sendToken,
    messageId,
    raw,
    get html() {
      if (html === undefined && p.variant.html) html = joinParts(p.variant.html, p.recipient, p.htmlValues);
      return html;
    },
    get text() {
      return (text ??= joinParts(p.variant.text, p.recipient, p.textValues));
    },
  };
}

function domainOf(from: string): string {
  const addr = addressOf(from);
  return addr.slice(addr.lastIndexOf('@') + 1) || 'notify';
}
