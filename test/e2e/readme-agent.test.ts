import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { npm, shown, startNpmStack, stop, userCommand, withInstallLock } from '../support/npm-process';
import type { Proc } from '../support/npm-process';

const root = path.resolve(__dirname, '..', '..');
const ADMIN = 'admin-readme-e2e-0123456789abcdef';
const SECTION = '## Your own agent in 20 lines';

/**
 * The README section's code, file by file: its `ts` blocks, split where a line starts with a
 * `// <name>.ts` comment (the file the lines below it go into), each kept verbatim.
 */
function readmeFiles(readme: string): Map<string, string> {
  const start = readme.indexOf(SECTION);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const end = readme.indexOf('\n## ', start + SECTION.length);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const files = new Map<string, string>();
  let current: string | undefined;
  for (const [, block] of section.matchAll(/```ts\n([\s\S]*?)```/g)) {
    for (const line of block!.split(/(?<=\n)/)) {
      const name = /^\/\/ ([\w.-]+\.ts)\b/.exec(line)?.[1];
      if (name) current = name;
      if (!current) throw new Error(`README code before any "// <file>.ts" line: ${line}`);
      files.set(current, (files.get(current) ?? '') + line);
    }
  }
  return files;
}

/**
 * An ES module project (`"type": "module"`) beside the pasted one, sharing its node_modules: an
 * agent importing `fairway/agent` (served by `fairway worker --agents`), and a script run by plain
 * `node`, without tsx, submitting through `fairway/client` and waiting for the run's result.
 */
const ESM_FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'esm-agent', private: true, type: 'module' }),
  'agents.ts': [
    "import { z } from 'zod';",
    "import { defineAgent } from 'fairway/agent';",
    'export const echo = defineAgent({',
    "  name: 'esm-echo',",
    '  input: z.object({ text: z.string() }),',
    '  estimate: 500,',
    '  async run(ctx, { text }) {',
    "    const reply = await ctx.model({ messages: [{ role: 'user', content: text }], maxTokens: 40 });",
    '    return { text: reply.text };',
    '  },',
    '});',
    '',
  ].join('\n'),
  'submit.mjs': [
    "import { createClient } from 'fairway/client';",
    'const fairway = createClient({ baseUrl: process.env.FAIRWAY_URL, apiKey: process.env.FAIRWAY_API_KEY });',
    "const run = await fairway.runs.start('esm-echo', { text: 'Hello from an ES module' });",
    'const { text } = await run.result();',
    'console.log(`esm run ${run.runId}: ${text}`);',
    '',
  ].join('\n'),
};

/**
 * README.md's "Your own agent in 20 lines" pasted into a new project, as the section says: a
 * package.json depending on Fairway by `file:` (what `npm i <checkout>` writes), zod and tsx;
 * Fairway started with `AGENTS` naming the pasted agents; the pasted worker and demo run with
 * `npx tsx`. The demo's run stops at the gate with its proposal, is approved, and completes with the
 * simulator's completion; the worker's tool and effect ran.
 */
describe("the README's own agent, pasted into a new project", () => {
  const project = mkdtempSync(path.join(os.tmpdir(), 'fairway-readme-'));
  const esm = path.join(project, 'esm');
  const dataDir = path.join(project, 'fairway-data');
  let stack: Proc | undefined;
  let worker: Proc | undefined;
  let esmWorker: Proc | undefined;
  afterAll(async () => {
    await stop(esmWorker);
    await stop(worker);
    await stop(stack);
    rmSync(project, { recursive: true, force: true });
  });

  it('runs the pasted agent through its worker and the typed client, gate and effect included', async () => {
    const files = readmeFiles(readFileSync(path.join(root, 'README.md'), 'utf8'));
    expect([...files.keys()]).toEqual(['agents.ts', 'worker.ts', 'demo.ts']);
    for (const [name, text] of files) writeFileSync(path.join(project, name), text);
    mkdirSync(esm);
    for (const [name, text] of Object.entries(ESM_FILES)) writeFileSync(path.join(esm, name), text);
    // The example's versions of zod and tsx: what its lock file already put in npm's cache.
    const example = JSON.parse(readFileSync(path.join(root, 'examples', 'research', 'package.json'), 'utf8'));
    const pkg = {
      name: 'readme-agent',
      private: true,
      dependencies: { fairway: `file:${root}`, tsx: example.dependencies.tsx, zod: example.dependencies.zod },
    };
    writeFileSync(path.join(project, 'package.json'), JSON.stringify(pkg, null, 2));
    const install = await withInstallLock(async () => {
      const p = npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], project, {});
      await p.exited;
      return p;
    });
    expect(await install.exited, shown(install.lines)).toBe(0);

    const started = startNpmStack(root, {
      label: 'readme',
      dataDir,
      agents: [path.join(project, 'agents.ts'), path.join(esm, 'agents.ts')].join(','),
      admin: ADMIN,
    });
    stack = await started.proc;
    const { api, apiKey, id, workerEnv } = await started.ready;

    // The README's commands; the test's stack listens on free ports, so the worker is told them.
    worker = userCommand('npx', ['tsx', 'worker.ts'], project, workerEnv);
    // The ES module project's worker, the CLI form, alongside (its bundle is built meanwhile).
    esmWorker = userCommand('npx', ['fairway', 'worker', '--agents', './agents.ts'], esm, workerEnv);
    const demo = userCommand('npx', ['tsx', 'demo.ts'], project, {
      FAIRWAY_URL: api,
      FAIRWAY_API_KEY: apiKey,
    });
    const code = await demo.exited;
    expect(code, `${shown(demo.lines)}\nworker:\n${shown(worker.lines)}`).toBe(0);

    const runs = (await (
      await fetch(`${api}/v1/runs`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { items: { runId: string; agent: string }[] };
    const pasted = runs.items.filter((r) => r.agent === 'research');
    expect(pasted).toHaveLength(1);
    const run = (await (
      await fetch(`${api}/v1/runs/${pasted[0]!.runId}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      })
    ).json()) as any;
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.agent).toBe('research');
    const answer = run.result.answer as string;
    // The simulator's deterministic completion, printed by the demo after the approval.
    expect(answer).toMatch(/^Simulated reply [0-9a-f]{8}:/);
    expect(demo.lines).toContain(answer);
    // The gate showed the draft, printed by the demo, and recorded the tenant key that approved.
    expect(run.gate).toMatchObject({ proposal: { answer }, decision: 'approve', note: 'looks right' });
    expect(run.gate.decidedBy).toMatch(new RegExp(`^key:readme-${id}#[0-9a-f]{12}$`));
    expect(run.result.decidedBy).toBe(run.gate.decidedBy);
    // console.log of the proposal object: `{ answer: '…' }` (util.inspect, wrapped when long).
    expect(demo.lines.join(' ').replace(/\s+/g, ' ')).toContain(`{ answer: '${answer}' }`);
    // The pasted tool served the call; the pasted effect ran once, under the run's key.
    expect(run.toolCalls.map((c: any) => `${c.tool}:${c.outcome}`)).toEqual(['search:ok']);
    const published = worker.lines.filter((l) => l.startsWith('published '));
    expect(published).toHaveLength(1);
    expect(published[0]).toMatch(new RegExp(`^published ${run.runId}:publish \\{`));

    // The ES module project: plain `node` imports fairway/client, the worker bundled the ESM agent.
    await esmWorker.line(/fairway worker: serving/, 180_000);
    const submit = userCommand('node', ['submit.mjs'], esm, { FAIRWAY_URL: api, FAIRWAY_API_KEY: apiKey });
    expect(await submit.exited, `${shown(submit.lines)}\nworker:\n${shown(esmWorker.lines)}`).toBe(0);
    const said = /^esm run (\S+): (Simulated reply [0-9a-f]{8}:.*)$/m.exec(submit.lines.join('\n'));
    expect(said, shown(submit.lines)).not.toBeNull();
    const echoed = (await (
      await fetch(`${api}/v1/runs/${said![1]}`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as any;
    expect(echoed).toMatchObject({ status: 'completed', agent: 'esm-echo', result: { text: said![2] } });
  });
});
