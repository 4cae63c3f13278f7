import { deliverEffect, sinkHasDelivery } from './effect-delivery';

/**
 * Delivers an applied effect to the sink once per idempotency key, across crashes. The effect store
 * records a confirmed delivery; an effect applied by an earlier attempt whose delivery was never
 * confirmed may still have reached the sink just before that attempt's worker died (SIGKILL between
 * the send and its record), so the sink is asked before sending again. The sink counts every POST
 * whatever the sender believes: a second delivery still shows there as a duplicate.
 */
export async function deliverOnce(
  effects: { markDelivered(key: string): Promise<void> },
  sinkUrl: string,
  key: string,
  state: { applied: boolean; delivered: boolean },
  as?: { tool: string; credential: string },
): Promise<void> {
  if (state.delivered) return;
  if (state.applied || !(await sinkHasDelivery(sinkUrl, key)))
    await deliverEffect(sinkUrl, key, undefined, as);
  await effects.markDelivered(key);
}
