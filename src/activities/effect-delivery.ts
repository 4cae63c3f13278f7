/** The client side of the effect sink (src/standins/effectsink): deliver an effect, ask about one. */

/**
 * The sender's side: delivers one effect; throws on anything but 200 (the activity retries). `as`: the
 * tool identity the effect is delivered under.
 */
export async function deliverEffect(
  sinkUrl: string,
  key: string,
  signal?: AbortSignal,
  as?: { tool: string; credential: string },
): Promise<void> {
  const res = await fetch(`${sinkUrl}/deliveries`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(as ? { 'fairway-tool': as.tool, authorization: `Bearer ${as.credential}` } : {}),
    },
    body: JSON.stringify({ key }),
    signal: signal ?? AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) throw new Error(`effect sink answered ${res.status}`);
}

/** Whether the sink has received a delivery of `key` (a 404 says it has not; anything else throws). */
export async function sinkHasDelivery(sinkUrl: string, key: string, signal?: AbortSignal): Promise<boolean> {
  const res = await fetch(`${sinkUrl}/deliveries/${encodeURIComponent(key)}`, {
    signal: signal ?? AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  if (res.status === 200) return true;
  if (res.status === 404) return false;
  throw new Error(`effect sink answered ${res.status} to a delivery lookup`);
}
