import type { AgentGatePolicy } from '../agent';

/**
 * The built-in gated agents' declared gates: how long a human may take, and what the run does when
 * nobody decided in time (`reject`: it stops as rejected; `approve`: it goes on; `escalate`: it acts
 * through its escalation path, the triage agent paging the on-call engineer). Pure: the agents declare
 * them (`gate`), and the config passes them, with GATE_TIMEOUT_SECONDS applied, in the run's options.
 */
export type GatePolicy = AgentGatePolicy;

export const GATES = {
  triage: { timeoutSeconds: 24 * 3600, onTimeout: 'escalate' },
} as const satisfies Record<string, GatePolicy>;

/** The key of the run options' gate policy for agents that declare none (GATE_TIMEOUT_SECONDS, rejecting). */
export const DEFAULT_GATE = '*';

/**
 * The built-ins' gates with every timeout replaced by `timeoutSeconds` (GATE_TIMEOUT_SECONDS),
 * outcomes as declared; when it is set, also the policy of a gate whose agent declares none
 * (`DEFAULT_GATE`: that timeout, then reject).
 */
export function gatePolicies(timeoutSeconds?: number): Record<string, GatePolicy> {
  const declared = Object.entries(GATES).map(([agent, g]): [string, GatePolicy] => [
    agent,
    { ...g, timeoutSeconds: timeoutSeconds ?? g.timeoutSeconds },
  ]);
  return Object.fromEntries(
    timeoutSeconds === undefined
      ? declared
      : [...declared, [DEFAULT_GATE, { timeoutSeconds, onTimeout: 'reject' }]],
  );
}
