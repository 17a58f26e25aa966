import type { BodyTemplate, MessageParts, Plan } from './message-parts.ts';

/**
 * The parts as one buffer, for a transport that needs the message in one piece (SES's API, a DKIM
 * signer, a custom mailer reading `raw`; notify's SMTP client writes the parts as they are).
 * A recipient whose values have the lengths of the first one joined (a token, a signature and an
 * unsubscribe URL always do) is one copy of that body with their values written into it: one copy
 * of ~30 KB and a write per value occurrence instead of a copy per part.
 */
export function joinParts(m: MessageParts): Buffer {
  const { head, values, plan } = m;
  const out = Buffer.allocUnsafe(m.length);
  head.copy(out, 0);
  const t = plan.template;
  if (t === undefined || !sameLengths(t.lengths, values)) {
    let at = head.length;
    for (const p of plan.pieces) {
      const b = typeof p === 'number' ? values[p] : p;
      out.set(b, at);
      at += b.length;
    }
    plan.template ??= templateOf(plan.pieces, values, out.subarray(head.length));
    return out;
  }
  const base = head.length;
  out.set(t.bytes, base);
  for (let i = 0; i < t.at.length; i++) out.set(values[t.value[i]], base + t.at[i]);
  return out;
}

function sameLengths(lengths: number[], values: Buffer[]): boolean {
  if (lengths.length !== values.length) return false;
  for (let i = 0; i < values.length; i++) if (values[i].length !== lengths[i]) return false;
  return true;
}

function templateOf(pieces: Plan['pieces'], values: Buffer[], body: Buffer): BodyTemplate {
  const at: number[] = [];
  const value: number[] = [];
  let offset = 0;
  for (const p of pieces) {
    const b = typeof p === 'number' ? values[p] : p;
    if (typeof p === 'number' && b.length > 0) {
      at.push(offset);
      value.push(p);
    }
    offset += b.length;
  }
  return { bytes: Buffer.from(body), at, value, lengths: values.map((v) => v.length) };
}
