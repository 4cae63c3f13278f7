import { deliverEffect } from '../../../src/activities/effect-delivery';
import type { EffectFunction } from '../../../src';

/**
 * A user's effects module (`fairway worker --effects`): `publish` delivers to the effect sink named by
 * EFFECT_SINK_URL, which counts deliveries per key, and answers what it published (or, with
 * `answerAs`, a value that is not JSON: a BigInt or a cycle).
 */
export const publish: EffectFunction = async (args, ctx) => {
  const sink = process.env.EFFECT_SINK_URL;
  if (!sink) throw new Error('EFFECT_SINK_URL is not set');
  if (args.refused === true) throw new Error(`downstream refused ${ctx.key}`);
  // The first attempt may hold before it delivers; a redelivery (its worker died) delivers at once.
  const hold = Number(args.holdMs ?? 0);
  if (!ctx.redelivery && hold > 0) await new Promise((r) => setTimeout(r, hold));
  await deliverEffect(sink, ctx.key);
  // A user's mistake, after the effect acted: a result that is not JSON.
  if (args.answerAs === 'bigint') return { published: 1n };
  if (args.answerAs === 'cycle') {
    const cycle: Record<string, unknown> = { key: ctx.key };
    cycle.self = cycle;
    return cycle;
  }
  return { published: String(args.answer), key: ctx.key, pid: process.pid };
};
