import type { ComposerFactory, OutgoingMessage, PersonalMessage } from '../core/mailer.ts';
import { joinParts } from '../render/personalize.ts';
import { encodeValues } from './encoded-parts.ts';
import { joinParts as joinBuffers } from './joined-message.ts';
import { bodyAssembler, type MessageParts } from './message-parts.ts';
import { messageIdDomain } from './message-id.ts';
import { framing, headerBlocks } from './mime.ts';

/**
 * Message assembly: a recipient's message as the domain describes it becomes a complete RFC 5322
 * message, as a list of buffers (`rawParts`): the framing (boundary, part headers) and the encoded
 * literal text are made once per compiled message and shared; per recipient there is one header
 * block and the recipient's values encoded once each. `raw` joins them on first use.
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
      domain = messageIdDomain(from);
    }
    const messageId = `<${m.sendToken}@${domain}>`;
    const head = headerBlock({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: m.date, messageId, headers: m.headers });
    const textValues = encodeValues(p.recipient, p.textValues);
    const html = p.variant.html;
    const htmlValues = html ? (p.htmlValues === p.textValues ? textValues : encodeValues(p.recipient, p.htmlValues, textValues)) : null;
    return new Outgoing(m, messageId, assemble(head, p.variant, textValues, htmlValues));
  };
};

/**
 * html and text are joined only if a custom mailer reads them; the built-in ones send the bytes.
 * `raw` is the parts joined into one buffer, made on first read; setting it (a DKIM signer does)
 * makes it the whole message.
 */
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
  readonly #parts: MessageParts;
  #raw: Buffer | undefined;
  /** raw was replaced (a signed copy): it is the message now */
  #set = false;
  readonly #m: PersonalMessage;

  constructor(
    m: PersonalMessage,
    readonly messageId: string,
    parts: MessageParts,
  ) {
    this.#parts = parts;
    this.#m = m;
    this.from = m.from;
    this.to = m.to;
    this.cc = m.cc;
    this.bcc = m.bcc;
    this.subject = m.subject;
    this.headers = m.headers;
    this.sendToken = m.sendToken;
  }

  get rawParts(): readonly Buffer[] {
    return this.#set ? [this.#raw!] : this.#parts.parts;
  }

  get raw(): Buffer {
    this.#raw ??= joinBuffers(this.#parts);
    return this.#raw;
  }

  set raw(bytes: Buffer) {
    this.#raw = bytes;
    this.#set = true;
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
