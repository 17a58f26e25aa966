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
}

export interface BodyTemplate {
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
