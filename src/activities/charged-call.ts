import type { CallCharges } from './call-charges';
import { certainlyUnbilled } from './call-outcome';

/** Who a call is charged to: the run's attempt, and its tenant. */
export interface ChargedTo {
  tenant: string;
  runId: string;
  attempt: number;
  perCall: boolean;
}

/**
 * One model call under the durable call ledger: its intent is recorded (with its worst case) before
 * it goes, and then it is charged what the provider billed, nothing when the provider certainly
 * billed nothing, or its worst case when its outcome is unknown (cut mid-flight, aborted). Without
 * `to` (a run without a tenant) the call goes unrecorded and uncharged. `call` gets the call's id
 * (its intent's key) to send with it. A call that failed and was
 * charged its worst case tells `onFailure` so.
 */
export async function chargedCall<T>(
  calls: Pick<CallCharges, 'begin' | 'billed' | 'unbilled' | 'uncertain'>,
  to: ChargedTo | undefined,
  step: number,
  reserved: number,
  call: (callId: string | undefined) => Promise<{ result: T; billed: number }>,
  onFailure?: (charged: number) => void,
): Promise<{ result: T; billed: number }> {
  const key = to && (await calls.begin({ ...to, step, reserved }));
  let out: { result: T; billed: number };
  try {
    out = await call(key);
  } catch (err) {
    if (to && key !== undefined) {
      if (certainlyUnbilled(err)) await calls.unbilled(key);
      else {
        await calls.uncertain(key, { ...to, tokens: reserved });
        onFailure?.(reserved);
      }
    }
    throw err;
  }
  if (to && key !== undefined) await calls.billed(key, { ...to, tokens: out.billed });
  return out;
}
