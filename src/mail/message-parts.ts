import type { Variant } from '../render/compile.ts';
import { type Parts, preEncoded } from './encoded-parts.ts';

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
export interface Plan {
  pieces: (Buffer | number)[];
  /** bytes of the literal pieces, and how often each value appears: a recipient's length without a walk */
  literalBytes: number;
  uses: number[];
  /** the whole body with the first joined recipient's values, for joining recipients whose values have their lengths */
  template?: BodyTemplate;
  /** the first list of a recipient with no empty value, and where (1 + piece index) each value sits in it */
  list?: { parts: Buffer[]; at: number[]; value: number[] };
}

export interface BodyTemplate {
  bytes: Buffer;
  /** byte offset in `bytes` of each non-empty value, and which value it is */
  at: number[];
  value: number[];
  lengths: number[];
}

/**
 * A recipient's message: their header block and values over the variant's plan. Nothing is
 * copied until a mailer reads the message: the list of buffers (`parts`) or the message joined into
 * one buffer then write the header block and the values into one buffer of their own, once, and
 * use views of it.
 */
export class MessageParts {
  #parts: Buffer[] | undefined;
  #bytes: { head: Buffer; values: Buffer[] } | undefined;
  constructor(
    /** the header block: UTF-8 (an SMTPUTF8 address may be in it) */
    readonly headText: string,
    readonly headBytes: number,
    /** quoted-printable, 7-bit: one byte a character; the text part's, then the html part's */
    readonly valueTexts: string[],
    readonly plan: Plan,
    /** total bytes */
    readonly length: number,
  ) {}

  /** the header block as bytes */
  get head(): Buffer {
    return this.bytes().head;
  }

  /** each value as bytes, in valueIndex order (the html part's after the text part's) */
  get values(): Buffer[] {
    return this.bytes().values;
  }

  /** the buffers to write in order; empty values are left out */
  get parts(): Buffer[] {
    if (this.#parts) return this.#parts;
    const { head, values } = this.bytes();
    this.#parts = values.every((v) => v.length > 0) ? fromList(this.plan, head, values) : listOf(this.plan.pieces, head, values);
    return this.#parts;
  }

  // one allocation and a view per value instead of a buffer each
  private bytes(): { head: Buffer; values: Buffer[] } {
    if (this.#bytes) return this.#bytes;
    const texts = this.valueTexts;
    let size = this.headBytes;
    for (let i = 0; i < texts.length; i++) size += texts[i].length;
    const all = Buffer.allocUnsafe(size);
    all.write(this.headText, 0, this.headBytes, 'utf8');
    const values: Buffer[] = new Array(texts.length);
    let at = this.headBytes;
    for (let i = 0; i < texts.length; i++) {
      const end = at + all.write(texts[i], at, texts[i].length, 'latin1');
      values[i] = all.subarray(at, end);
      at = end;
    }
    this.#bytes = { head: all.subarray(0, this.headBytes), values };
    return this.#bytes;
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
    const values = withHtml ? text.concat(html!) : text;
    const headBytes = Buffer.byteLength(headText, 'utf8');
    let length = headBytes + plan.literalBytes;
    for (let i = 0; i < values.length; i++) length += plan.uses[i] * values[i].length;
    return new MessageParts(headText, headBytes, values, plan, length);
  };
}

function listOf(pieces: Plan['pieces'], head: Buffer, values: Buffer[]): Buffer[] {
  const parts: Buffer[] = [head];
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i];
    const b = typeof p === 'number' ? values[p] : p;
    if (b.length > 0) parts.push(b);
  }
  return parts;
}

/**
 * With no empty value (the common case) every piece is one entry, at 1 + its index: the list is a
 * copy of the plan's first one with the recipient's header block and values put in place.
 */
function fromList(plan: Plan, head: Buffer, values: Buffer[]): Buffer[] {
  if (plan.list === undefined) {
    const at: number[] = [];
    const value: number[] = [];
    plan.pieces.forEach((p, i) => {
      if (typeof p === 'number') {
        at.push(i + 1);
        value.push(p);
      }
    });
    plan.list = { parts: listOf(plan.pieces, head, values), at, value };
  }
  const { at, value } = plan.list;
  const parts = plan.list.parts.slice();
  parts[0] = head;
  for (let i = 0; i < at.length; i++) parts[at[i]] = values[value[i]];
  return parts;
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
