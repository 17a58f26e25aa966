import { qpEncode, qpSpliceValue } from '../mail/encoding.ts';
import type { CompiledMessage, Variant } from './compile.ts';
import { escapeHtml, renderSync, unescapeHtml } from './liquid.ts';
import { type Part, SIG, TOKEN, UNSUB } from './tracking-rewrite.ts';

/** What differs between two recipients of one compiled message. */
export interface Recipient {
  token: string;
  /** link signature for (token, scope), see core/link-refs.ts */
  sig: string;
  /** '' when the send has no single contact to unsubscribe */
  unsubscribeUrl: string;
  /** Liquid `contact` variable; undefined when the message has no single contact */
  contact?: Record<string, unknown>;
}

export interface Personalized {
  subject: string;
  variant: Variant;
  /** slot values for the html part (escaped) and the text part (plain) */
  htmlValues: string[];
  textValues: string[];
  recipient: Recipient;
}

const NO_VALUES: string[] = [];

/** Fills in one recipient. In the common case this is a few small template renders at most. */
export async function personalize(compiled: CompiledMessage, r: Recipient): Promise<Personalized> {
  const { engines, slots } = compiled;
  const scope: Record<string, unknown> | null = slots.length > 0 || typeof compiled.subject !== 'string' || !compiled.base ? { ...compiled.data, contact: r.contact ?? {} } : null;
  const subject = typeof compiled.subject === 'string' ? compiled.subject : renderSync(engines.plain, compiled.subject, scope!);
  const variant = compiled.base ?? (await compiled.variant(scope!));
  // a layout that filters the subject ({{ subject | upcase }}) renders it from the recipient's own
  if (typeof compiled.subject !== 'string') scope!.subject = subject;
  if (slots.length === 0) return { subject, variant, htmlValues: NO_VALUES, textValues: NO_VALUES, recipient: r };
  const htmlValues: string[] = new Array(slots.length);
  const textValues: string[] = new Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    if (slot.subject) {
      htmlValues[i] = escapeHtml(subject);
      textValues[i] = subject;
      continue;
    }
    const v = renderSync(slot.plain ? engines.plain : engines.body, slot.tpl, scope!);
    htmlValues[i] = v;
    textValues[i] = slot.plain ? v : unescapeHtml(v);
  }
  return { subject, variant, htmlValues, textValues, recipient: r };
}

function slotValue(p: number, r: Recipient, values: string[]): string {
  if (p === TOKEN) return r.token;
  if (p === SIG) return r.sig;
  if (p === UNSUB) return r.unsubscribeUrl;
  return values[p] ?? '';
}

/** The part as a string (custom mailers, logs). */
export function joinParts(parts: Part[], r: Recipient, values: string[]): string {
  let out = '';
  for (const p of parts) out += typeof p === 'string' ? p : slotValue(p, r, values);
  return out;
}

/** Per-recipient values by position: 0 token, 1 sig, 2 unsubscribe URL, 3+i slot i. */
const position = (p: number) => (p < 0 ? -p - 1 : p + 3);

/**
 * The recipient's values, quoted-printable encoded once each (a token appears in every link, so
 * encoding per occurrence would cost more than the rest of the message). `shared` reuses the token,
 * signature and unsubscribe encodings of the other part.
 */
export function encodeValues(r: Recipient, slotValues: string[], shared?: Buffer[]): Buffer[] {
  const out: Buffer[] = new Array(3 + slotValues.length);
  out[0] = shared ? shared[0] : qpSpliceValue(r.token);
  out[1] = shared ? shared[1] : qpSpliceValue(r.sig);
  out[2] = shared ? shared[2] : qpSpliceValue(r.unsubscribeUrl);
  for (let i = 0; i < slotValues.length; i++) out[3 + i] = qpSpliceValue(slotValues[i]);
  return out;
}

const encoded = new WeakMap<Part[], (Buffer | number)[]>();

/**
 * Appends the part's quoted-printable pieces to `into`: literal text encoded once per compiled
 * message, values from `values` (see encodeValues). Returns the bytes appended.
 */
export function pushEncoded(into: Buffer[], parts: Part[], values: Buffer[]): number {
  let pre = encoded.get(parts);
  if (!pre) {
    pre = parts.map((p) => (typeof p === 'string' ? qpEncode(p, true) : position(p)));
    encoded.set(parts, pre);
  }
  let bytes = 0;
  for (let i = 0; i < pre.length; i++) {
    const p = pre[i];
    const b = typeof p === 'number' ? values[p] : p;
    into.push(b);
    bytes += b.length;
  }
  return bytes;
}
