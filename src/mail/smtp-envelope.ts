import { type Reply, replyText } from './smtp-reply.ts';

export interface Envelope {
  from: string;
  to: string[];
}

/** the replies in order; when the connection failed before the last, those read and the failure */
export type Replies = (Reply | undefined)[] & { lost?: Error };

export interface SentMessage {
  accepted: string[];
  /** recipients the server refused, with its reply (the message went to the others) */
  rejected: { recipient: string; response: string }[];
  /** the server's answer to the end of DATA */
  response: string;
}

/** MAIL FROM with its parameters, one RCPT TO per recipient, then DATA */
export function envelopeCommands(envelope: Envelope, eightBit: boolean, smtpUtf8: boolean, extensions: ReadonlySet<string>): string[] {
  let params = '';
  if ((eightBit || smtpUtf8) && extensions.has('8BITMIME')) params += ' BODY=8BITMIME';
  if (smtpUtf8) params += ' SMTPUTF8';
  return [`MAIL FROM:<${envelope.from}>${params}`, ...envelope.to.map((to) => `RCPT TO:<${to}>`), 'DATA'];
}

/** the recipients the server took (2xx to RCPT TO) and those it refused, with its reply */
export function sortRecipients(to: readonly string[], replies: Replies): { accepted: string[]; rejected: { recipient: string; response: string; reply: Reply }[] } {
  const accepted: string[] = [];
  const rejected: { recipient: string; response: string; reply: Reply }[] = [];
  to.forEach((recipient, i) => {
    const r = replies[i + 1];
    if (r && r.code >= 200 && r.code < 300) accepted.push(recipient);
    else if (r) rejected.push({ recipient, response: replyText(r), reply: r });
  });
  return { accepted, rejected };
}
