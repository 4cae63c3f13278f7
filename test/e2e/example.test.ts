import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { search } from '../../examples/research/src/tools';
import { npm, shown, startNpmStack, stop, withInstallLock } from '../support/npm-process';
import type { Proc } from '../support/npm-process';

const root = path.resolve(__dirname, '..', '..');
const example = path.join(root, 'examples', 'research');
const ADMIN = 'admin-example-e2e-0123456789abcdef';
const QUESTION = 'Why is the sky blue? Explain the scattering of sunlight.';

/** `npm ci` in the example when it has no node_modules yet, as a fresh clone needs. */
async function installExample(): Promise<void> {
  if (existsSync(path.join(example, 'node_modules', 'fairway'))) return;
  const ci = await withInstallLock(async () => {
    const p = npm(['ci', '--no-audit', '--no-fund'], example, {});
    await p.exited;
    return p;
  });
  const code = await ci.exited;
  if (code !== 0) throw new Error(`npm ci in examples/research failed (${code}):\n${shown(ci.lines)}`);
}

/**
 * examples/research run with its own commands on this checkout, as its README says: Fairway's stack
 * (`npm start`, AGENTS naming the example's agents), the example's worker (`npm run worker`), and its
 * demo (`npm run demo`, the typed client). Then what a user would check: the completions of both
 * dialects, the tool's result, the gate's proposal and approver, and the effect delivered once.
 */
describe('examples/research end to end', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-example-'));
  const publishFile = path.join(dataDir, 'published.jsonl');
  let stack: Proc | undefined;
  let worker: Proc | undefined;
  afterAll(async () => {
    await stop(worker);
    await stop(stack);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('submits through the typed client, approves at the gate, publishes once, summarizes', async () => {
    await installExample();
    const started = startNpmStack(root, {
      label: 'example',
      tenant: 'research',
      dataDir,
      agents: path.join(example, 'src', 'agents.ts'),
      admin: ADMIN,
      env: { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
    });
    stack = await started.proc;
    const { api, apiKey, id, workerEnv } = await started.ready;

    worker = npm(['run', 'worker'], example, {
      ...workerEnv,
      PUBLISH_FILE: publishFile,
    });
    await worker.line(/research worker: serving/, 180_000);

    const demo = npm(['run', 'demo', '--', QUESTION], example, { FAIRWAY_URL: api, FAIRWAY_API_KEY: apiKey });
    const code = await demo.exited;
    const out = demo.lines.join('\n');
    expect(code, shown(demo.lines)).toBe(0);
    const researchId = /research run: (\S+)/.exec(out)?.[1];
    const summarizeId = /summarize run: (\S+)/.exec(out)?.[1];
    expect(researchId, out).toBeDefined();
    expect(summarizeId, out).toBeDefined();

    const view = async (runId: string) =>
      (await (
        await fetch(`${api}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${apiKey}` } })
      ).json()) as any;
    const r = await view(researchId!);
    expect(r.status, JSON.stringify(r)).toBe('completed');
    // The completion (OpenAI dialect, the default model): the simulator's deterministic text.
    expect(r.result.answer).toMatch(/^Simulated reply [0-9a-f]{8}:/);
    expect(r.result.model).toMatch(/gpt/);
    expect(out).toContain(`answer (${r.result.model}): ${r.result.answer}`);
    // The tool's result, served by the example's worker under its own identity.
    const expected = (await search({ q: QUESTION })).hits;
    expect(expected.length).toBeGreaterThan(0);
    expect(r.result.hits).toEqual(expected);
    expect(r.toolCalls.map((c: any) => `${c.tool}:${c.outcome}`)).toEqual(['search:ok']);
    // The gate showed the draft to the approver, and recorded who approved.
    expect(r.gate).toMatchObject({
      proposal: { question: QUESTION, answer: r.result.answer, sources: expected },
      decision: 'approve',
      note: 'checked the sources',
    });
    // The tenant API key's id: `key:<tenant>#<12 hex>`.
    expect(r.gate.decidedBy).toMatch(new RegExp(`^key:research-${id}#[0-9a-f]{12}$`));
    expect(r.result.decidedBy).toBe(r.gate.decidedBy);
    expect(out).toContain(`proposal: ${JSON.stringify(r.gate.proposal)}`);
    // The effect: delivered once, under the run's key, with the approved answer.
    const published = readFileSync(publishFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(published.filter((p: any) => p.key === `${researchId}:publish`)).toHaveLength(1);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ runId: researchId, question: QUESTION, answer: r.result.answer });
    expect(r.result).toMatchObject({ published: true, delivery: { publishedTo: publishFile } });

    const s = await view(summarizeId!);
    expect(s.status, JSON.stringify(s)).toBe('completed');
    // The Anthropic dialect (sim-claude), on the same simulator.
    expect(s.result.summary).toMatch(/^Simulated reply [0-9a-f]{8}:/);
    expect(s.result.model).toMatch(/claude/);
    expect(s.result.usage.totalTokens).toBe(s.result.usage.inputTokens + s.result.usage.outputTokens);
    expect(s.usage.tokens).toBeGreaterThanOrEqual(s.result.usage.totalTokens);
    expect(out).toContain(`summary (${s.result.model}): ${s.result.summary}`);
  });
});
