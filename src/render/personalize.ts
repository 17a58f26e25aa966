import type { CompiledMessage, Variant } from './compile.ts';
import { escapeHtml, renderSync, unescapeHtml } from './liquid.ts';
import { type Part, PREFS, SIG, TOKEN, UNSUB } from './tracking-rewrite.ts';

/** What differs between two recipients of one compiled message. */
export interface Recipient {
  token: string;
  /** link signature for (token, scope), see core/link-refs.ts */
  sig: string;
  /** '' when the send has no single contact to unsubscribe */
  unsubscribeUrl: string;
  /** the preference centre of the contact; '' (or absent) when the send has no single contact */
  preferencesUrl?: string;
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
  if (p === PREFS) return r.preferencesUrl ?? '';
  return values[p] ?? '';
}

/** The part as a string (custom mailers, logs). */
export function joinParts(parts: Part[], r: Recipient, values: string[]): string {
  let out = '';
  for (const p of parts) out += typeof p === 'string' ? p : slotValue(p, r, values);
  return out;
}

/** Where a part's value sits among a recipient's values: 0 token, 1 sig, 2 unsubscribe URL, 3 preferences URL, 4+i slot i. */
export const FIXED_VALUES = 4;
export const valueIndex = (p: number) => (p < 0 ? -p - 1 : p + FIXED_VALUES);
