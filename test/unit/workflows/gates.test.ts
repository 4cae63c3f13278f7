import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../../src/agent';
import { AGENTS } from '../../../src/agents/catalog';
import { DEFAULT_GATE, gatePolicies } from '../../../src/agents/gates';
import type { RunSpec } from '../../../src/contract/fleet-port';
import { gatePolicyOf } from '../../../src/workflows/run-context';
import type { RunOptions } from '../../../src/workflows/run-lifecycle';
import { RunState } from '../../../src/workflows/run-state';
import { baseTaskQueueOf } from '../../../src/workflows/tools';

const opts = (gateTimeout?: number): RunOptions => ({
  reofferFirstSeconds: 300,
  reofferMaxSeconds: 1800,
  gates: gatePolicies(gateTimeout),
});
const agent = (gate?: { timeoutSeconds: number; onTimeout: 'approve' | 'reject' | 'escalate' }) =>
  defineAgent({
    name: 'gated',
    input: z.object({}),
    estimate: 1,
    ...(gate ? { gate } : {}),
    run: async () => null,
  });

describe('a gate policy', () => {
  it('is the built-in’s declared gate, GATE_TIMEOUT_SECONDS overriding its timeout only', () => {
    expect(gatePolicyOf(opts(), AGENTS.triage, { proposal: 1 })).toEqual({
      timeoutSeconds: 86_400,
      onTimeout: 'escalate',
    });
    expect(gatePolicyOf(opts(3), AGENTS.triage, { proposal: 1 })).toEqual({
      timeoutSeconds: 3,
      onTimeout: 'escalate',
    });
  });

  it("is the call's own first, then the agent's declared gate, then GATE_TIMEOUT_SECONDS rejecting", () => {
    const declared = agent({ timeoutSeconds: 60, onTimeout: 'approve' });
    expect(gatePolicyOf(opts(3), declared, { proposal: 1 })).toEqual({
      timeoutSeconds: 60,
      onTimeout: 'approve',
    });
    expect(gatePolicyOf(opts(3), declared, { proposal: 1, timeoutSeconds: 5, onTimeout: 'reject' })).toEqual({
      timeoutSeconds: 5,
      onTimeout: 'reject',
    });
    expect(gatePolicyOf(opts(3), agent(), { proposal: 1 })).toEqual({
      timeoutSeconds: 3,
      onTimeout: 'reject',
    });
    expect(opts(3).gates?.[DEFAULT_GATE]).toEqual({ timeoutSeconds: 3, onTimeout: 'reject' });
  });

  it('waits until decided when nothing sets a timeout, and refuses a timeout that is not positive', () => {
    expect(gatePolicyOf(opts(), agent(), { proposal: 1 })).toEqual({
      timeoutSeconds: null,
      onTimeout: 'reject',
    });
    expect(gatePolicyOf({ reofferFirstSeconds: 1, reofferMaxSeconds: 1 }, agent(), { proposal: 1 })).toEqual({
      timeoutSeconds: null,
      onTimeout: 'reject',
    });
    expect(() => gatePolicyOf(opts(), agent(), { proposal: 1, timeoutSeconds: 0 })).toThrow(/positive/);
  });
});

const spec: RunSpec = {
  runId: 'run-t-00000000000000000001',
  tenant: 't',
  agent: 'gated',
  priority: 'standard',
  input: {},
  estimatedTokens: 10,
  createdAt: '2026-01-01T00:00:00.000Z',
};
const opened = (onTimeout: 'approve' | 'reject' | 'escalate' = 'reject') => {
  const s = new RunState(spec);
  s.openGate({ proposal: { act: 'x' }, openedAt: '2026-01-01T00:00:01.000Z', timeoutSeconds: 60, onTimeout });
  s.status = 'awaiting_approval';
  return s;
};

describe("a run's gate view", () => {
  it('shows the proposal while waiting, then who decided, when, and the note', () => {
    const s = opened();
    expect(s.view().gate).toEqual({
      gateId: 1,
      proposal: { act: 'x' },
      openedAt: '2026-01-01T00:00:01.000Z',
      timeoutSeconds: 60,
      onTimeout: 'reject',
    });
    expect(
      s.decide({ decision: 'approve', note: 'go', by: 'key-7', at: '2026-01-01T00:00:09.000Z' }, 0),
    ).toBe(true);
    expect(s.decision).toEqual({
      decision: 'approve',
      note: 'go',
      by: 'key-7',
      at: '2026-01-01T00:00:09.000Z',
      timedOut: false,
    });
    expect(s.view().gate).toMatchObject({ decision: 'approve', decidedBy: 'key-7', note: 'go' });
    expect(s.view().gate?.timedOut).toBeUndefined();
    // A second answer changes nothing.
    expect(s.decide({ decision: 'reject', by: 'key-8' }, 0)).toBe(false);
    expect(s.view().gate?.decidedBy).toBe('key-7');
  });

  it('takes the time of the signal, and an unknown approver, from an older API', () => {
    const s = opened();
    s.decide({ decision: 'reject' }, Date.parse('2026-01-01T00:01:00.000Z'));
    expect(s.view().gate).toMatchObject({ decidedBy: 'unknown', decidedAt: '2026-01-01T00:01:00.000Z' });
  });

  it('refuses a decision when no gate waits', () => {
    const s = new RunState(spec);
    s.status = 'awaiting_approval';
    expect(s.decide({ decision: 'approve', by: 'k' }, 0)).toBe(false);
    const running = opened();
    running.status = 'running';
    expect(running.decide({ decision: 'approve', by: 'k' }, 0)).toBe(false);
  });

  it('records a timeout as decided by `timeout`, escalate acting as approve', () => {
    for (const [onTimeout, decision] of [
      ['reject', 'reject'],
      ['approve', 'approve'],
      ['escalate', 'approve'],
    ] as const) {
      const s = opened(onTimeout);
      s.timeOut(Date.parse('2026-01-01T00:01:01.000Z'));
      expect(s.decision).toMatchObject({ decision, by: 'timeout', timedOut: true });
      expect(s.view().gate).toMatchObject({
        timedOut: true,
        outcome: onTimeout,
        decision,
        decidedBy: 'timeout',
        decidedAt: '2026-01-01T00:01:01.000Z',
        note: `gate timed out: ${onTimeout}`,
      });
    }
  });

  it('starts each gate undecided', () => {
    const s = opened();
    s.decide({ decision: 'approve', by: 'k' }, 0);
    s.openGate({ proposal: 2, openedAt: 'later', timeoutSeconds: null, onTimeout: 'reject' });
    expect(s.decision).toBeNull();
    expect(s.view().gate).toEqual({
      gateId: 2,
      proposal: 2,
      openedAt: 'later',
      timeoutSeconds: null,
      onTimeout: 'reject',
    });
  });
});

describe('a decision naming a gate', () => {
  it('is for another gate only while one waits and the names differ', () => {
    const s = opened();
    expect(s.namesOtherGate({ decision: 'approve', gateId: 1 })).toBe(false);
    expect(s.namesOtherGate({ decision: 'approve' })).toBe(false);
    s.decide({ decision: 'reject', gateId: 1 }, 0);
    s.openGate({ proposal: 2, openedAt: 'later', timeoutSeconds: null, onTimeout: 'reject' });
    // Gate 1's late approve, arriving at gate 2, is another gate's.
    expect(s.namesOtherGate({ decision: 'approve', gateId: 1 })).toBe(true);
    expect(s.namesOtherGate({ decision: 'approve', gateId: 2 })).toBe(false);
    // Once gate 2 is decided, nothing waits: decide refuses every decision by itself.
    s.decide({ decision: 'approve', gateId: 2 }, 0);
    expect(s.namesOtherGate({ decision: 'approve', gateId: 1 })).toBe(false);
    expect(s.decide({ decision: 'approve', gateId: 1 }, 0)).toBe(false);
  });
});

describe('the base task queue of a run', () => {
  it('is its agent queue less the agent, or the queue itself', () => {
    expect(baseTaskQueueOf('fairway.agent.triage', 'triage')).toBe('fairway');
    expect(baseTaskQueueOf('fairway', 'triage')).toBe('fairway');
    expect(baseTaskQueueOf('fairway.agent.audit', 'triage')).toBe('fairway.agent.audit');
  });

  it('refuses an onTimeout that is not approve, reject or escalate (a typo must not approve)', () => {
    const typo = agent({ timeoutSeconds: 60, onTimeout: 'rejct' as 'reject' });
    expect(() => gatePolicyOf(opts(), typo, { proposal: 1 })).toThrow(
      /onTimeout must be one of approve, reject, escalate, not "rejct"/,
    );
    expect(() => gatePolicyOf(opts(), agent(), { proposal: 1, onTimeout: 'deny' as 'reject' })).toThrow(
      /InvalidGate|onTimeout/,
    );
  });
});
