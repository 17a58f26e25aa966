import { createHash, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { NotifyError } from '../errors.ts';

/**
 * DKIM signing (RFC 6376, relaxed/relaxed; RSA-SHA256 per RFC 8301 or Ed25519-SHA256 per RFC 8463)
 * of a complete message. Signed headers: whichever of these the message has, every instance, so a
 * relay cannot change what a reader sees or where one-click unsubscribe posts (RFC 8058 requires
 * both List-Unsubscribe headers under the signature).
 */
export interface DkimOptions {
  domainName: string;
  keySelector: string;
  /** PEM (PKCS#1 or PKCS#8), RSA of at least 1024 bits or Ed25519 */
  privateKey: string;
}

const SIGNED = [
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'list-id',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'feedback-id',
];
const MAX_LINE = 78;

export type DkimSigner = (raw: Buffer, now: number) => Buffer;

/** A signer for these options; a key that cannot be read is CONFIG_INVALID at start, not a failed send later. */
export function createDkimSigner(o: DkimOptions): DkimSigner {
  const key = readKey(o.privateKey);
  const algorithm = key.asymmetricKeyType === 'ed25519' ? 'ed25519-sha256' : 'rsa-sha256';
  return (raw, now) => {
    const split = raw.indexOf('\r\n\r\n');
    const head = (split < 0 ? raw : raw.subarray(0, split + 2)).toString('latin1');
    const body = split < 0 ? Buffer.alloc(0) : raw.subarray(split + 4);
    const fields = headerFields(head);
    const signed: string[] = [];
    const names: string[] = [];
    for (const name of SIGNED) {
      // Instances are signed bottom-up, as a verifier takes them (RFC 6376 5.4.2).
      for (const f of fields.filter((x) => x.name === name).reverse()) {
        signed.push(relaxedHeader(f.raw));
        names.push(name);
      }
    }
    const bh = createHash('sha256').update(relaxedBody(body)).digest('base64');
    const tags = ["v=1", `a=${algorithm}`, "c=relaxed/relaxed", `d=${o.domainName}`, `s=${o.keySelector}`, `t=${Math.floor(now / 1000)}`, `h=${names.join(':')}`, `bh=${bh}`];
    const unsigned = `DKIM-Signature: ${foldTags(tags)};\r\n b=`;
    // The signature's own header is hashed last, with b= empty and no final CRLF (RFC 6376 3.7).
    const data = Buffer.from(`${signed.join('')}${relaxedHeader(unsigned).slice(0, -2)}`, 'latin1');
    const b =
      algorithm === 'rsa-sha256' ? sign('sha256', data, key).toString('base64') : sign(null, createHash('sha256').update(data).digest(), key).toString('base64');
    return Buffer.concat([Buffer.from(`${unsigned}${foldValue(b, 3)}\r\n`, 'latin1'), raw]);
  };
}

function readKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    // .env values often carry the PEM's line breaks as \n
    key = createPrivateKey(pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem);
  } catch (err) {
    throw new NotifyError('CONFIG_INVALID', `Option 'dkim.privateKey' is not a readable PEM private key: ${(err as Error).message}`, { option: 'dkim' }, { cause: err });
  }
  const type = key.asymmetricKeyType;
  if (type === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 1024) return key;
  if (type === 'ed25519') return key;
  throw new NotifyError('CONFIG_INVALID', `Option 'dkim.privateKey' must be an RSA key of at least 1024 bits or an Ed25519 key (got ${type})`, { option: 'dkim' });
}

interface Field {
  name: string;
  /** the whole field, folded lines included, ending in CRLF */
  raw: string;
}

function headerFields(head: string): Field[] {
  const out: Field[] = [];
  for (const line of head.split(/(?<=\r\n)/)) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && out.length > 0) out[out.length - 1].raw += line;
    else out.push({ name: line.slice(0, line.indexOf(':')).trim().toLowerCase(), raw: line });
  }
  return out;
}

/** RFC 6376 3.4.2: lower-case name, unfolded, runs of white space as one space, none around the colon or at the end. */
function relaxedHeader(field: string): string {
  const colon = field.indexOf(':');
  const name = field.slice(0, colon).trim().toLowerCase();
  const value = field
    .slice(colon + 1)
    .replace(/\r\n(?=[ \t])/g, '')
    .replace(/\r\n$/, '')
    .replace(/[ \t]+/g, ' ')
    .trim();
  return `${name}:${value}\r\n`;
}

/** RFC 6376 3.4.4: white space runs as one space, none at line ends, no empty lines at the end, one final CRLF. */
function relaxedBody(body: Buffer): Buffer {
  const text = body
    .toString('latin1')
    .replace(/[ \t]+\r\n/g, '\r\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/[ \t]+$/, '')
    .replace(/(\r\n)+$/, '');
  return Buffer.from(text === '' ? '' : `${text}\r\n`, 'latin1');
}

/** Tags joined by `; `, a line broken before a tag (or inside h= at a colon) so no line passes 78 characters. */
function foldTags(tags: string[]): string {
  let out = '';
  let col = 'DKIM-Signature: '.length;
  for (const [i, tag] of tags.entries()) {
    const piece = i === 0 ? tag : `; ${tag}`;
    if (col + piece.length + 1 <= MAX_LINE) {
      out += piece;
      col += piece.length;
      continue;
    }
    out += i === 0 ? '' : ';';
    // FWS is allowed after every colon of h= (RFC 6376 3.5)
    for (const [j, part] of (tag.startsWith('h=') ? tag.split(/(?<=:)/) : [tag]).entries()) {
      if (j === 0 || col + part.length + 1 > MAX_LINE) {
        out += `\r\n ${part}`;
        col = 1 + part.length;
      } else {
        out += part;
        col += part.length;
      }
    }
  }
  return out;
}

/** A base64 value broken into lines of at most 78 characters (white space inside b= is ignored). */
function foldValue(value: string, firstColumn: number): string {
  const lines: string[] = [];
  let rest = value;
  let room = MAX_LINE - firstColumn;
  while (rest.length > room) {
    lines.push(rest.slice(0, room));
    rest = rest.slice(room);
    room = MAX_LINE - 1;
  }
  lines.push(rest);
  return lines.join('\r\n ');
}
