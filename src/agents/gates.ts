/**
 * Each gated agent's declared gate: how long a human may take, and what the run does when nobody
 * decided in time (`reject`: it stops as rejected; `escalate`: it acts through its escalation path, the
 * triage agent paging the on-call engineer). Pure: workflow code reads it through the run's options.
 */
export interface GatePolicy {
  timeoutSeconds: number;
  onTimeout: 'reject' | 'escalate';
}

export const GATES: Record<string, GatePolicy> = {
  triage: { timeoutSeconds: 24 * 3600, onTimeout: 'escalate' },
};

/** The gates with every timeout replaced by `timeoutSeconds` (GATE_TIMEOUT_SECONDS), outcomes as declared. */
export function gatePolicies(timeoutSeconds?: number): Record<string, GatePolicy> {
  return Object.fromEntries(
    Object.entries(GATES).map(([agent, g]) => [
      agent,
      { ...g, timeoutSeconds: timeoutSeconds ?? g.timeoutSeconds },
    ]),
  );
}
