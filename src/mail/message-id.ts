import { addressOf } from './smtp.ts';

/**
 * The id-right of a message's Message-ID `<send token@domain>`: the From address's domain, which
 * formatFrom keeps short enough for the msg-id to fit a 78-character header line (it cannot be
 * folded). Every composer (the dispatcher's, the DKIM signer's for a message handed over unbuilt)
 * takes it from here, so a message's Message-ID does not depend on the transport or on signing.
 */
export function messageIdDomain(from: string): string {
  const addr = addressOf(from);
  return addr.slice(addr.lastIndexOf('@') + 1) || 'notify';
}
