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

export interface BodyFraming {
  beforeText: string;
  beforeHtml: string | null;
  end: string;
}

/**
 * One variant's body under one framing, for any number of recipients: the literal text between two
 * values (framing included) quoted-printable encoded into one Buffer, once; a number where a
 * recipient's value goes (text values at their valueIndex, html values after them). Every encoded
 * piece ends with a soft line break or is a whole line, so a value always starts where the bytes
 * of one string joining everything would have put it: the pieces in order are that string's bytes.
 */
interface Plan {
  pieces: (Buffer | number)[];
  /** bytes of the literal pieces, and how often each value appears: a recipient's length without a walk */
  literalBytes: number;
  uses: number[];
  /** the whole body with the first joined recipient's values, for joining recipients whose values have their lengths */
  template?: BodyTemplate;
}

interface BodyTemplate {
  bytes: Buffer;
  /** byte offset in `bytes` of each non-empty value, and which value it is */
  at: number[];
  value: number[];
  lengths: number[];
}

/**
 * A recipient's message: their header block and values over the variant's plan. The list of
 * buffers is made when a mailer asks for it; joining into one buffer (what SMTP reads) does not
 * need it.
 */
export class MessageParts {
  #parts: Buffer[] | undefined;
  constructor(
    readonly head: Buffer,
    readonly values: Buffer[],
    readonly plan: Plan,
    /** total bytes */
    readonly length: number,
  ) {}

  /** the buffers to write in order; empty values are left out */
  get parts(): Buffer[] {
    if (this.#parts) return this.#parts;
    const { pieces } = this.plan;
    const parts: Buffer[] = [this.head];
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      const b = typeof p === 'number' ? this.values[p] : p;
      if (b.length > 0) parts.push(b);
    }
    this.#parts = parts;
    return parts;
  }
}

/**
 * Header block + body over a plan of literal buffers shared by every recipient (never written to):
 * a recipient adds the header block and one small buffer per value, used wherever that value
 * appears (a token is in every link), so a recipient costs their values, not a copy of the ~30 KB
 * body.
 */
export function bodyAssembler(f: BodyFraming): (head: string, variant: Variant, text: string[], html: string[] | null) => MessageParts {
  const plans = new WeakMap<Variant, Plan>();
  return (headText, variant, text, html) => {
    const withHtml = variant.html !== null && html !== null && f.beforeHtml !== null;
    let plan = plans.get(variant);
    if (plan === undefined) {
      plan = planOf(piecesOf(f, variant, text.length, withHtml), withHtml ? 2 * text.length : text.length);
      plans.set(variant, plan);
    }
    const n = text.length;
    const values: Buffer[] = new Array(withHtml ? 2 * n : n);
    for (let i = 0; i < n; i++) values[i] = latin1(text[i]);
    // the html part shares the token, signature and unsubscribe URL (and every value without slots)
    if (withHtml) for (let i = 0; i < n; i++) values[n + i] = html === text || html![i] === text[i] ? values[i] : latin1(html![i]);
    const head = Buffer.from(headText, 'utf8');
    let length = head.length + plan.literalBytes;
    for (let i = 0; i < values.length; i++) length += plan.uses[i] * values[i].length;
    return new MessageParts(head, values, plan, length);
  };
}

function planOf(pieces: Plan['pieces'], values: number): Plan {
  const uses: number[] = new Array(values).fill(0);
  let literalBytes = 0;
  for (const p of pieces) {
    if (typeof p === 'number') uses[p]++;
    else literalBytes += p.length;
  }
  return { pieces, literalBytes, uses };
}

const EMPTY = Buffer.alloc(0);
const latin1 = (v: string) => (v.length === 0 ? EMPTY : Buffer.from(v, 'latin1'));

function piecesOf(f: BodyFraming, variant: Variant, values: number, withHtml: boolean): Plan['pieces'] {
  const pieces: Plan['pieces'] = [];
  let run = f.beforeText;
  const fill = (parts: Parts, offset: number) => {
    for (const p of preEncoded(parts)) {
      if (typeof p === 'string') run += p;
      else {
        if (run) pieces.push(Buffer.from(run, 'latin1'));
        run = '';
        pieces.push(offset + p);
      }
    }
  };
  fill(variant.text, 0);
  if (withHtml) {
    run += f.beforeHtml;
    fill(variant.html!, values);
  }
  run += f.end;
  if (run) pieces.push(Buffer.from(run, 'latin1'));
  return pieces;
}

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
