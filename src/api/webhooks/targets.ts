import { BlockList, isIP } from 'node:net';

/**
 * Where deliveries may go. `public` (the default): not to loopback, private, link-local (cloud
 * metadata), CGNAT, multicast or unspecified addresses, nor to any IPv6 prefix that carries an IPv4
 * address for a translator or relay to reach (NAT64, IPv4-translated, 6to4, Teredo), checked on the address actually connected to
 * (after DNS, so a name that resolves inside is refused too); `any`: anywhere (a receiver on this host
 * or in the private network, as in tests and development).
 */
export type WebhookTargets = 'public' | 'any';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible
  ['64:ff9b::', 96], // NAT64: an IPv4 address behind the translator
  ['64:ff9b:1::', 48], // local-use NAT64
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['2001::', 32], // Teredo: a relay forwards to the IPv4 address inside
  ['2002::', 16], // 6to4: a relay forwards to the IPv4 address inside
  ['fc00::', 7],
  ['fec0::', 10], // site-local (deprecated)
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, bits, 'ipv6');

/**
 * True when `address` (an IP) is one `public` forbids. IPv4-mapped IPv6 (either spelling,
 * `::ffff:127.0.0.1` or `::ffff:7f00:1`) is checked as IPv4.
 */
export function isForbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host without an IPv6 literal's brackets. */
export const literalHost = (u: URL): string => u.hostname.replace(/^\[|\]$/g, '');

/**
 * The IP literal `public` forbids that `url` names, or undefined: the connection check (on the
 * resolved address) does not run for a literal, which is not resolved.
 */
export function forbiddenLiteral(u: URL): string | undefined {
  const host = literalHost(u);
  return isIP(host) !== 0 && isForbiddenAddress(host) ? host : undefined;
}

/**
 * Why `url` cannot be an endpoint, or undefined: http(s) only, no user or password, and under
 * `public` no literal address it forbids nor `localhost` (names are checked again when connecting).
 */
export function targetProblem(url: string, targets: WebhookTargets): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'Not a URL.';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return 'Only http and https URLs can receive webhooks.';
  if (u.username || u.password) return 'A webhook URL may not carry a user or password.';
  if (targets === 'any') return undefined;
  const host = literalHost(u).replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || forbiddenLiteral(u) !== undefined)
    return 'The URL names a loopback, private or link-local address (WEBHOOK_TARGETS=public).';
  return undefined;
}
