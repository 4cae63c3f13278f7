import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import request from 'supertest';
import { bearer, makeHarness, type Harness } from './harness';
import { parseRunRequest } from '../../../src/api/intake/parse-requests';
import { builtInCatalog } from '../../../src/api/agents/catalog';

const agents = builtInCatalog();

/** Property tests of the door (issue 11): whatever a client sends, invalid input never starts a run. */
describe('intake properties', () => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    h = makeHarness();
    key = await h.tenant('acme', { maxQueued: 100_000 });
  });
  afterAll(() => h.close());

  const agentName = fc.constantFrom('synthetic', 'triage', 'audit', 'nope', '', 'constructor');
  const inputs = fc.oneof(
    fc.anything(),
    fc.record({ steps: fc.oneof(fc.integer(), fc.double(), fc.string()) }, { requiredKeys: [] }),
    fc.record({ incident: fc.string({ maxLength: 3000 }) }, { requiredKeys: [] }),
    fc.record({ targets: fc.array(fc.string(), { maxLength: 60 }) }, { requiredKeys: [] }),
  );
  const bodies = fc.oneof(
    fc.anything(),
    fc.record(
      {
        agent: fc.oneof(agentName, fc.anything()),
        input: inputs,
        priority: fc.oneof(fc.constantFrom('interactive', 'standard', 'batch', 'urgent'), fc.anything()),
        estimatedTokens: fc.oneof(fc.integer(), fc.double(), fc.string()),
        extra: fc.anything(),
      },
      { requiredKeys: [] },
    ),
  );

  it('a body the parser refuses never reaches the fleet, and no body gives a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        let valid = true;
        try {
          parseRunRequest(body, undefined, agents);
        } catch {
          valid = false;
        }
        const before = h.fleet.startRunCalls.length;
        const submitsBefore = h.fleet.submitCalls.length;
        const res = await request(h.app)
          .post('/v1/runs')
          .set(bearer(key))
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body) ?? 'null');
        expect(res.status).toBeLessThan(500);
        if (!valid) {
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(h.fleet.startRunCalls.length).toBe(before);
          expect(h.fleet.submitCalls.length).toBe(submitsBefore);
        }
        if (res.status !== 202) expect(h.fleet.startRunCalls.length).toBe(before);
      }),
      { seed: 11, numRuns: 300 },
    );
  });
});
