import type { ComposerFactory, OutgoingMessage, PersonalMessage } from '../core/mailer.ts';
import { joinParts } from '../render/personalize.ts';
import { bodyAssembler, encodeValues } from './encoded-parts.ts';
import { framing, headerBlocks } from './mime.ts';
import { addressOf } from './smtp.ts';

/**
 * Message assembly: a recipient's message as the domain describes it becomes one complete RFC 5322
 * buffer. The framing (boundary, part headers) is made once per compiled message; per recipient
 * there is one header block, the recipient's values encoded once each, and one copy.
 */
export const composerFor: ComposerFactory = (multipart) => {
  const assemble = bodyAssembler(framing(multipart));
  const headerBlock = headerBlocks();
  let from = '';
  let domain = '';
  return (m) => {
    const p = m.content;
    if (m.from !== from) {
      from = m.from;
      domain = domainOf(from);
    }
    const messageId = `<${m.sendToken}@${domain}>`;
    const head = headerBlock({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: m.date, messageId, headers: m.headers });
    const textValues = encodeValues(p.recipient, p.textValues);
    const html = p.variant.html;
    const htmlValues = html ? (p.htmlValues === p.textValues ? textValues : encodeValues(p.recipient, p.htmlValues, textValues)) : null;
    const raw = assemble(head, p.variant, textValues, htmlValues);
    return new Outgoing(m, messageId, raw);
  };
};

/** html and text are joined only if a custom mailer reads them; the built-in ones send `raw`. */
class Outgoing implements OutgoingMessage {
  readonly from: string;
  readonly to: string[];
  readonly cc: string[] | undefined;
  readonly bcc: string[] | undefined;
  readonly subject: string;
  readonly headers: Record<string, string>;
  readonly sendToken: string;
  #html: string | undefined;
  #text: string | undefined;
  readonly #m: PersonalMessage;

  constructor(
    m: PersonalMessage,
    readonly messageId: string,
    readonly raw: Buffer,
  ) {
    this.#m = m;
    this.from = m.from;
    this.to = m.to;
    this.cc = m.cc;
    this.bcc = m.bcc;
    this.subject = m.subject;
    this.headers = m.headers;
    this.sendToken = m.sendToken;
  }

  get html(): string | undefined {
    const p = this.#m.content;
    if (this.#html === undefined && p.variant.html) this.#html = joinParts(p.variant.html, p.recipient, p.htmlValues);
    return this.#html;
  }

  get text(): string {
    const p = this.#m.content;
    this.#text ??= joinParts(p.variant.text, p.recipient, p.textValues);
    return this.#text;
  }
}

function domainOf(from: string): string {
  const addr = addressOf(from);
  return addr.slice(addr.lastIndexOf('@') + 1) || 'notify';
}
