import type { Variant } from '../render/compile.ts';
import { FIXED_VALUES, type Recipient, valueIndex } from '../render/personalize.ts';
import { qpEncode, qpSpliceText } from './encoding.ts';

/**
 * A recipient's values, quoted-printable encoded once each (a token appears in every link, so
 * encoding per occurrence would cost more than the rest of the message), in valueIndex order.
 * `shared` reuses the token, signature, unsubscribe and preferences encodings of the other part. Encoded
 * text is 7-bit, so pieces are kept as strings: joining them makes a rope that is written into
 * the message buffer once, without a copy per piece.
 */
export function encodeValues(r: Recipient, slotValues: string[], shared?: string[]): string[] {
  const out: string[] = new Array(FIXED_VALUES + slotValues.length);
  out[0] = shared ? shared[0] : qpSpliceText(r.token);
  out[1] = shared ? shared[1] : qpSpliceText(r.sig);
  out[2] = shared ? shared[2] : qpSpliceText(r.unsubscribeUrl);
  out[3] = shared ? shared[3] : qpSpliceText(r.preferencesUrl ?? '');
  for (let i = 0; i < slotValues.length; i++) out[FIXED_VALUES + i] = qpSpliceText(slotValues[i]);
  return out;
}

export type Parts = Variant['text'];

const encoded = new WeakMap<Parts, (string | number)[]>();

/**
 * The part's quoted-printable text: literal text encoded once per compiled message, values from
 * `values` (see encodeValues), joined in order.
 */
export function encodedPart(parts: Parts, values: string[]): string {
  const pre = preEncoded(parts);
  let out = '';
  for (let i = 0; i < pre.length; i++) {
    const p = pre[i];
    out += typeof p === 'number' ? values[p] : p;
  }
  return out;
}

/** literal text quoted-printable encoded (once per compiled part), values as their valueIndex */
export function preEncoded(parts: Parts): (string | number)[] {
  let pre = encoded.get(parts);
  if (!pre) {
    pre = parts.map((p) => (typeof p === 'string' ? qpEncode(p, true).toString('latin1') : valueIndex(p)));
    encoded.set(parts, pre);
  }
  return pre;
}
