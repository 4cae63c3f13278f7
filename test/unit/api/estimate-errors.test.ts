import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../src/agent';
import { AgentCatalog } from '../../../src/api/agents/catalog';
import { bearer, useHarness } from './harness';

/** An agent whose own estimate fails for some inputs: a user's bug, answered 400, never 500. */
const fragile = defineAgent({
  name: 'fragile',
  input: z.object({ how: z.enum(['ok', 'throw', 'nan', 'negative']) }),
  estimate: (input) => {
    if (input.how === 'throw') throw new Error('no estimate for this');
    if (input.how === 'nan') return Number.NaN;
    if (input.how === 'negative') return -5;
    return 100;
  },
  run: async () => null,
});

describe("an agent's estimate that fails for an input", () => {
  const h = useHarness({ tenants: ['acme'], agents: new AgentCatalog([{ agent: fragile, origin: 'test' }]) });
  const acme = () => bearer(h.keys.acme ?? '');

  it.each(['throw', 'nan', 'negative'])(
    'answers 400 invalid_request naming the input (%s), and queues nothing',
    async (how) => {
      const res = await request(h.app)
        .post('/v1/runs')
        .set(acme())
        .send({ agent: 'fragile', input: { how } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details).toEqual([
        {
          path: 'input',
          message: expect.stringMatching(/^The agent "fragile" could not estimate this input: /),
        },
      ]);
      const batch = await request(h.app)
        .post('/v1/batches')
        .set(acme())
        .send({ agent: 'fragile', items: [{ how: 'ok' }, { how }] });
      expect(batch.status).toBe(400);
      expect(batch.body.error.details).toEqual([{ path: 'items.1', message: expect.any(String) }]);
      expect(h.fleet.records.size).toBe(0);
      expect(h.fleet.batches.size).toBe(0);
    },
  );

  it('still accepts an input it can estimate', async () => {
    const res = await request(h.app)
      .post('/v1/runs')
      .set(acme())
      .send({ agent: 'fragile', input: { how: 'ok' } });
    expect(res.status).toBe(202);
  });
});
