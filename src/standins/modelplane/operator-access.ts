import { timingSafeEqual } from 'node:crypto';

/** Whether a peer address is this host's loopback (127.0.0.0/8, ::1, or IPv4 loopback mapped into IPv6). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/**
 * Who may use the simulator's `/admin/*` and the effect sink's `/summary`: a loopback peer (the drills,
 * the tests, a container's own healthcheck), or anyone presenting `Authorization: Bearer <token>` when a
 * token is configured. A peer elsewhere on the network without it is refused: these routes switch a
 * tenant's calls to failing and show every tenant's bill.
 */
export function operatorAllowed(
  remoteAddress: string | undefined,
  authorization: string | undefined,
  token: string | undefined,
): boolean {
  if (isLoopback(remoteAddress)) return true;
  if (!token || !authorization?.startsWith('Bearer ')) return false;
  const presented = Buffer.from(authorization.slice(7));
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
