import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAgentCatalog, type AgentCatalog } from '../../../src/api/agents/catalog';
import { SERVED_CACHE_MS } from '../../../src/api/agents/served';
import { bearer, useHarness } from './harness';

const MODULES = path.join(__dirname, 'agent-modules');
const BUILT_INS = ['synthetic', 'triage', 'audit'];

describe('the agent catalog (AGENTS)', () => {
  it('holds the built-ins and every agent an agents module exports, paths relative to the working directory', async () => {
    const catalog = await loadAgentCatalog(['research.ts'], MODULES);
    expect(catalog.names()).toEqual([...BUILT_INS, 'research', 'short-summary']);
    const research = catalog.get('research');
    expect(research && catalog.estimate(research, research.input.parse({ question: 'q', depth: 3 }))).toBe(
      3000,
    );
    expect(catalog.get('constructor')).toBeUndefined();
  });

  it('stops the start, naming the module, for a module with no agent, a taken name, or a failing import', async () => {
    await expect(loadAgentCatalog(['empty.ts'], MODULES)).rejects.toThrow(
      /agents module empty\.ts \(AGENTS\) exports no agent/,
    );
    await expect(loadAgentCatalog(['clash.ts'], MODULES)).rejects.toThrow(
      /Two agents are called "triage": one in the built-in agents, one in clash\.ts/,
    );
    await expect(loadAgentCatalog(['research.ts', './research.ts'], MODULES)).rejects.toThrow(
      /Two agents are called "research"/,
    );
    await expect(loadAgentCatalog(['broken.ts'], MODULES)).rejects.toThrow(
      /agents module broken\.ts \(AGENTS\) did not load: Error: broken at import/,
    );
    await expect(loadAgentCatalog(['missing.ts'], MODULES)).rejects.toThrow(
      /agents module missing\.ts \(AGENTS\) did not load/,
    );
  });
});

describe('the API learns the agents', () => {
  let agents: AgentCatalog;
  beforeAll(async () => {
    agents = await loadAgentCatalog(['research.ts'], MODULES);
  });
  const h = useHarness({
    tenants: ['acme'],
    get agents() {
      return agents;
    },
  });
  const acme = () => bearer(h.keys.acme ?? '');

  it('GET /v1/agents lists each agent with its input JSON Schema, tools, effects, gate, estimate and workers', async () => {
    const res = await request(h.app).get('/v1/agents').set(acme());
    expect(res.status).toBe(200);
    const items = res.body.items as Record<string, any>[];
    expect(items.map((a) => a.name)).toEqual([...BUILT_INS, 'research', 'short-summary']);
    const research = items.find((a) => a.name === 'research');
    expect(research).toMatchObject({
      description: 'Answers a question from what it finds.',
      tools: ['search'],
      effects: ['publish'],
      gate: { timeoutSeconds: 3600, onTimeout: 'reject' },
      estimate: { kind: 'input' },
      served: true,
      links: { self: '/v1/agents/research' },
    });
    // The schema a client sends: `depth` has a default, so it is not required.
    expect(research?.input).toMatchObject({
      type: 'object',
      properties: { question: { type: 'string', minLength: 1 }, depth: { type: 'integer', default: 1 } },
      required: ['question'],
      additionalProperties: false,
    });
    expect(items.find((a) => a.name === 'short-summary')?.estimate).toEqual({ kind: 'fixed', tokens: 500 });
    expect(items.find((a) => a.name === 'triage')).toMatchObject({
      tools: ['lookup', 'pager'],
      gate: { onTimeout: 'escalate' },
    });
    // The admin token reads the catalog too.
    expect((await request(h.app).get('/v1/agents').set(h.admin())).status).toBe(200);
  });

  it('says served: false for an agent no worker polls, asking Temporal at most once per agent per few seconds', async () => {
    h.fleet.unserved.add('research');
    await request(h.app).get('/v1/agents').set(acme());
    const again = await request(h.app).get('/v1/agents/research').set(acme());
    expect(again.body.served).toBe(false);
    expect(h.fleet.servedCalls.filter((a) => a === 'research')).toHaveLength(1);
    h.fleet.unserved.delete('research');
    h.clock.now += SERVED_CACHE_MS;
    expect((await request(h.app).get('/v1/agents/research').set(acme())).body.served).toBe(true);
    expect(h.fleet.servedCalls.filter((a) => a === 'research')).toHaveLength(2);
  });

  it('GET /v1/agents/:name answers 404 unknown_agent with the known names', async () => {
    const res = await request(h.app).get('/v1/agents/nope').set(acme());
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({
      code: 'unknown_agent',
      details: { known: [...BUILT_INS, 'research', 'short-summary'] },
    });
  });

  it("runs a user's agent: its schema validates (400 with the path), its estimate reserves", async () => {
    const bad = await h.submit(h.keys.acme ?? '', { agent: 'research', input: { question: '', extra: 1 } });
    expect(bad.status).toBe(400);
    const paths = (bad.body.error.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(['input.extra', 'input.question']);
    const ok = await h.submit(h.keys.acme ?? '', {
      agent: 'research',
      input: { question: 'why?', depth: 2 },
    });
    expect(ok.status).toBe(202);
    const started = h.fleet.startRunCalls.at(-1);
    expect(started).toMatchObject({
      agent: 'research',
      estimatedTokens: 2000,
      input: { question: 'why?', depth: 2 },
    });
    // No worker polls it: still accepted (it waits for one), and the list says so.
    h.fleet.unserved.add('short-summary');
    expect((await h.submit(h.keys.acme ?? '', { agent: 'short-summary', input: { text: 'x' } })).status).toBe(
      202,
    );
  });

  it('answers 404 unknown_agent, naming the agents, for runs, batches, parted batches and triggers', async () => {
    const known = [...BUILT_INS, 'research', 'short-summary'];
    const answers = [
      await h.submit(h.keys.acme ?? '', { agent: 'nope', input: {} }),
      await request(h.app)
        .post('/v1/batches')
        .set(acme())
        .send({ agent: 'nope', items: [{}] }),
      await request(h.app).post('/v1/batches/open').set(acme()).send({ agent: 'nope' }),
      await request(h.app).put('/v1/triggers/t').set(acme()).send({ eventType: 'x', agent: 'nope' }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'unknown_agent', details: { known } });
    }
    const trigger = await request(h.app)
      .put('/v1/triggers/t')
      .set(acme())
      .send({ eventType: 'x', agent: 'research', input: { question: 'q' } });
    expect(trigger.status).toBe(201);
    const batch = await request(h.app)
      .post('/v1/batches')
      .set(acme())
      .send({ agent: 'research', items: [{ question: 'a' }, { question: 'b', depth: 3 }] });
    expect(batch.status).toBe(202);
  });

  it("serves an OpenAPI document with the user's agents in the run and batch bodies", async () => {
    const doc = (await request(h.app).get('/openapi.json')).body;
    const schemas = doc.components.schemas as Record<string, any>;
    expect(schemas.ResearchInput).toMatchObject({ properties: { question: { type: 'string' } } });
    expect(schemas.ShortSummaryInput).toBeDefined();
    expect(Object.keys(schemas.RunRequest.discriminator.mapping)).toEqual([
      ...BUILT_INS,
      'research',
      'short-summary',
    ]);
    expect(doc.paths['/v1/agents']).toBeDefined();
    expect(doc.paths['/v1/approvals']).toBeDefined();
  });
});
