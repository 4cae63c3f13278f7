/**
 * A provider's `usage.total_tokens` checked against what the call could cost: a finite,
 * non-negative count no larger than the call's worst case (its prompt plus its `max_tokens`, what
 * the step reserved before it called). Anything else is a provider fault: the call is charged its
 * worst case, which it may have been billed, and the answer is reported as a fault.
 */
export type UsageReading = { tokens: number; fault: null } | { tokens: number; fault: string };

export function readUsage(value: unknown, worstCase: number): UsageReading {
  const worst = Math.max(0, Math.ceil(worstCase));
  if (typeof value !== 'number' || !Number.isFinite(value))
    return { tokens: worst, fault: `usage.total_tokens is not a finite number (${String(value)})` };
  if (value < 0) return { tokens: worst, fault: `usage.total_tokens is negative (${value})` };
  if (value > worst)
    return { tokens: worst, fault: `usage.total_tokens (${value}) exceeds the call's worst case (${worst})` };
  return { tokens: Math.ceil(value), fault: null };
}
