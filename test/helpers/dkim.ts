import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';

export interface DkimKey {
  /** PEM, as the dkim option takes it */
  privateKey: string;
  /** the TXT record a domain publishes at <selector>._domainkey.<domain> */
  record: string;
}

export function dkimKey(type: 'rsa' | 'ed25519' = 'rsa'): DkimKey {
  const { privateKey, publicKey } = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
  const der = publicKey.export({ type: 'spki', format: 'der' });
  // Ed25519 records hold the bare 32-byte key (RFC 8463), RSA ones the SubjectPublicKeyInfo
  const p = (type === 'rsa' ? der : der.subarray(der.length - 32)).toString('base64');
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=${type}; p=${p}` };
}

export interface DkimCheck {
  result: string;
  /** the signing domain */
  domain: string;
  /** lower-case names of the signed headers (h=) */
  signed: string[];
  comment?: string;
}

/**
 * The signatures of a message as mailauth (a third-party verifier) judges them, with the only DNS it
 * may query being the record given for `<selector>._domainkey.<domain>`.
 */
export async function verifyDkim(raw: Buffer, records: Record<string, string>): Promise<DkimCheck[]> {
  const resolver = async (name: string, type: string) => {
    if (type === 'TXT' && records[name]) return [[records[name]]];
    throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
  };
  const { results } = await dkimVerify(raw, { resolver });
  return results.map((r: { status: { result: string; comment?: string }; signingDomain: string; signingHeaders?: { keys: string } }) => ({
    result: r.status.result,
    comment: r.status.comment,
    domain: r.signingDomain,
    signed: (r.signingHeaders?.keys ?? '').split(/:\s*/).filter(Boolean).map((k) => k.toLowerCase()),
  }));
}

/**
 * The message with a DKIM-Signature made by mailauth's own signer with the canonicalisation asked
 * for: `simple/simple` signs the header lines byte for byte, folds included.
 */
export async function mailauthSign(raw: Buffer, o: { domainName: string; keySelector: string; privateKey: string; canonicalization: 'simple/simple' | 'relaxed/relaxed'; headerList: string[] }): Promise<Buffer> {
  // the signer reads its keys from signatureData (lib/dkim/dkim-signer.js); its .d.ts names top-level ones it ignores.
  // headerList is read as a colon-separated string: an array is ignored for its default list (lib/tools.js).
  // signTime, the clock read once: without it mailauth (4.13) rounds Date.now() once for the t= it signs
  // and again for the t= it writes, and a half second passing in between (a loaded machine) makes its
  // own signature fail ("bad signature"), simple and relaxed alike
  const options = {
    canonicalization: o.canonicalization,
    headerList: o.headerList.join(':'),
    signTime: new Date(),
    signatureData: [{ signingDomain: o.domainName, selector: o.keySelector, privateKey: o.privateKey }],
  };
  const { signatures, errors } = await dkimSign(raw, options as unknown as Parameters<typeof dkimSign>[1]);
  if (errors?.length) throw errors[0];
  return Buffer.concat([Buffer.from(signatures), raw]);
}
