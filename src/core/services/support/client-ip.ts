/**
 * The address an anonymous caller is metered and throttled by. IPv4-mapped IPv6 is the
 * IPv4 address it carries; any other IPv6 address counts as its /64, because one
 * household or host is routinely handed a whole /64 and could otherwise rotate through it.
 */
import { isIPv4, isIPv6 } from 'node:net';

function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right];
}

export function meteringAddress(ip: string): string {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(bare) || bare.includes('.') || bare === '::1') return bare;
  const groups = expandIPv6(bare.toLowerCase())
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''));
  return `${groups.join(':')}::/64`;
}
