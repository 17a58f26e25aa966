import { verpAddress } from '../bounces/verp.ts';
import type { Mailer, OutgoingMessage } from './contract.ts';
import { createDkimSigner, type DkimOptions } from './dkim.ts';
import { messageIdDomain } from './message-id.ts';
import { composeMime } from './mime.ts';

export interface DeliverabilityOptions {
  /** sends leave with envelope sender bounces+<send token>@<bounceDomain> */
  bounceDomain?: string;
  dkim?: DkimOptions;
  now?: () => number;
}

/**
 * What every message gets whatever the transport (SMTP, SES, outbox, log, an application's own
 * mailer): the VERP envelope sender and the DKIM signature. Signing happens here, on the finished
 * bytes, so campaigns, drips, one-off and test sends and the double opt-in email are all signed.
 * A message handed over unbuilt (no Message-ID, no bytes: the double opt-in email) is written here
 * too, signed or not, so that its header lines are folded and its Message-ID made as the
 * dispatcher's are, not as the transport's library would (nodemailer's `<36-character id@domain>`
 * passes 78 characters for a From domain over 27); its html/text are no longer used.
 */
export function withDeliverability(mailer: Mailer, o: DeliverabilityOptions): Mailer {
  const sign = o.dkim ? createDkimSigner(o.dkim) : undefined;
  const now = o.now ?? Date.now;
  // Set on the message itself: the composer's message has lazy html/text getters a copy would run,
  // and a raw getter that joins its parts (read only when signing: messageId is checked first).
  const prepare = (m: OutgoingMessage): OutgoingMessage => {
    if (o.bounceDomain) m.envelopeFrom = verpAddress(m.sendToken, o.bounceDomain);
    const unbuilt = m.messageId === undefined && m.rawParts === undefined && m.raw === undefined;
    if (sign || unbuilt) {
      const messageId = m.messageId ?? `<${m.sendToken}@${messageIdDomain(m.from)}>`;
      const raw = m.raw ?? composeMime({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: now(), messageId, headers: m.headers }, m.text, m.html);
      m.raw = sign ? sign(raw, now()) : raw;
      m.messageId = messageId;
    }
    return m;
  };
  return {
    name: mailer.name,
    send: (m) => mailer.send(prepare(m)),
    sendWhen: mailer.sendWhen && ((m, ready) => mailer.sendWhen!(prepare(m), ready)),
    concurrency: mailer.concurrency,
    close: mailer.close && (() => mailer.close!()),
  };
}
