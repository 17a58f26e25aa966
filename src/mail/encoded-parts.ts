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

type Parts = Variant['text'];

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
function preEncoded(parts: Parts): (string | number)[] {
  let pre = encoded.get(parts);
  if (!pre) {
    pre = parts.map((p) => (typeof p === 'string' ? qpEncode(p, true).toString('latin1') : valueIndex(p)));
    encoded.set(parts, pre);
  }
  return pre;
}

/** The body of one variant under one framing, with a hole wherever a recipient's value goes. */
interface BodyTemplate {
  bytes: Buffer;
  /** byte offset in `bytes`, which part's values (0 text, 1 html), index in those values */
  holes: { at: number; part: 0 | 1; value: number }[];
  /** the value lengths the holes were made for, per part */
  lengths: [number[], number[] | null];
}

export interface BodyFraming {
  beforeText: string;
  beforeHtml: string | null;
  end: string;
}

/**
 * Encoded header block + body in one buffer. Most recipients of a compiled message have values of
 * the lengths the second one had (a token, a signature and an unsubscribe URL are fixed-length;
 * Liquid output may not be): the body is then one copy of a template made from that recipient,
 * with each value written into its hole: one copy of 30 KB instead of one per piece (~250 for a
 * message with 30 links). Otherwise the parts are joined as text (encodedPart) and written once.
 */
export function bodyAssembler(f: BodyFraming): (head: string, variant: Variant, text: string[], html: string[] | null) => Buffer {
  // null: seen once. A variant of one recipient's own markup is joined, never made a template.
  const templates = new WeakMap<Variant, BodyTemplate | null>();
  return (head, variant, text, html) => {
    const withHtml = variant.html !== null && html !== null && f.beforeHtml !== null;
    let t = templates.get(variant);
    if (t === undefined) {
      templates.set(variant, null);
      return joined(head, f, variant, text, withHtml ? html : null);
    }
    if (t === null) {
      t = template(f, variant, text, withHtml ? html : null);
      templates.set(variant, t);
    } else if (!sameLengths(t.lengths[0], text) || (withHtml && !sameLengths(t.lengths[1], html!))) return joined(head, f, variant, text, withHtml ? html : null);
    const headBytes = Buffer.byteLength(head, 'utf8');
    const out = Buffer.allocUnsafe(headBytes + t.bytes.length);
    out.write(head, 0, headBytes, 'utf8');
    t.bytes.copy(out, headBytes);
    const textBytes = text.map(latin1);
    // the html part shares the token, signature and unsubscribe URL (and every value without slots)
    const htmlBytes = !withHtml ? [] : html === text ? textBytes : html!.map((v, i) => (v === text[i] ? textBytes[i] : latin1(v)));
    for (const h of t.holes) out.set(h.part === 0 ? textBytes[h.value] : htmlBytes[h.value], headBytes + h.at);
    return out;
  };
}

const latin1 = (v: string) => Buffer.from(v, 'latin1');

function sameLengths(lengths: number[] | null, values: string[]): boolean {
  if (lengths === null || lengths.length !== values.length) return false;
  for (let i = 0; i < values.length; i++) if (values[i].length !== lengths[i]) return false;
  return true;
}

function template(f: BodyFraming, variant: Variant, text: string[], html: string[] | null): BodyTemplate {
  const holes: BodyTemplate['holes'] = [];
  let body = f.beforeText;
  const fill = (parts: Parts, values: string[], part: 0 | 1) => {
    for (const p of preEncoded(parts)) {
      if (typeof p === 'string') body += p;
      else {
        if (values[p].length > 0) holes.push({ at: body.length, part, value: p });
        body += values[p];
      }
    }
  };
  fill(variant.text, text, 0);
  if (html !== null && variant.html) {
    body += f.beforeHtml;
    fill(variant.html, html, 1);
  }
  body += f.end;
  return { bytes: Buffer.from(body, 'latin1'), holes, lengths: [text.map((v) => v.length), html?.map((v) => v.length) ?? null] };
}

function joined(head: string, f: BodyFraming, variant: Variant, text: string[], html: string[] | null): Buffer {
  const body = html !== null && variant.html ? f.beforeText + encodedPart(variant.text, text) + f.beforeHtml + encodedPart(variant.html, html) + f.end : f.beforeText + encodedPart(variant.text, text) + f.end;
  const headBytes = Buffer.byteLength(head, 'utf8');
  const out = Buffer.allocUnsafe(headBytes + body.length);
  out.write(head, 0, headBytes, 'utf8');
  out.write(body, headBytes, body.length, 'latin1');
  return out;
}
