import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The bucket a client IP is counted in. IPv4: the address. IPv6: its /64, because one subscriber
 * line usually gets a whole /64 and could otherwise rotate through 2^64 addresses. IPv4-mapped IPv6
 * (::ffff:1.2.3.4, in any spelling) counts as the IPv4 address. Anything else (no socket, a proxy
 * header that is not an IP) shares one `other` bucket rather than getting a bucket per string.
 */
export function ipBucket(ip: string): string {
  const bare = ip.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return 'other';
  const groups = expandIpv6(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** Eight 16-bit groups of a valid IPv6 address (with `::` and an embedded IPv4 tail resolved). */
function expandIpv6(ip: string): number[] {
  let text = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : new Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16));
}

/** The per-address bucket: a hash, so Redis or the database never hold the address itself. */
export function addressBucket(emailKey: string): string {
  return createHash('sha256').update(emailKey).digest('base64url').slice(0, 32);
}
