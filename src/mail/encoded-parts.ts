import type { Variant } from '../render/compile.ts';
import { FIXED_VALUES, type Recipient, valueIndex } from '../render/personalize.ts';
import { qpEncode, qpSpliceValue } from './encoding.ts';

/**
 * A recipient's values, quoted-printable encoded once each (a token appears in every link, so
 * encoding per occurrence would cost more than the rest of the message), in valueIndex order.
 * `shared` reuses the token, signature, unsubscribe and preferences encodings of the other part.
 */
export function encodeValues(r: Recipient, slotValues: string[], shared?: Buffer[]): Buffer[] {
  const out: Buffer[] = new Array(FIXED_VALUES + slotValues.length);
  out[0] = shared ? shared[0] : qpSpliceValue(r.token);
  out[1] = shared ? shared[1] : qpSpliceValue(r.sig);
  out[2] = shared ? shared[2] : qpSpliceValue(r.unsubscribeUrl);
  out[3] = shared ? shared[3] : qpSpliceValue(r.preferencesUrl ?? '');
  for (let i = 0; i < slotValues.length; i++) out[FIXED_VALUES + i] = qpSpliceValue(slotValues[i]);
  return out;
}

type Parts = Variant['text'];

const encoded = new WeakMap<Parts, (Buffer | number)[]>();

/**
 * Appends the part's quoted-printable pieces to `into`: literal text encoded once per compiled
 * message, values from `values` (see encodeValues). Returns the bytes appended.
 */
export function pushEncoded(into: Buffer[], parts: Parts, values: Buffer[]): number {
  let pre = encoded.get(parts);
  if (!pre) {
    pre = parts.map((p) => (typeof p === 'string' ? qpEncode(p, true) : valueIndex(p)));
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
