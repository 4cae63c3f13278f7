import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEntrySource, loadAgentModules } from '../../../src/fleet/agent-bundle';
import { workflowsPath } from '../../../src/fleet/worker';

const support = path.join(__dirname, '..', '..', 'support', 'agents');

describe('agents modules, checked before bundling', () => {
  it('finds the agents a module exports', async () => {
    const [m] = await loadAgentModules(['research.ts'], support);
    expect(m).toEqual({ path: path.join(support, 'research.ts'), agents: ['research', 'recap'] });
  });

  it('refuses a module that takes a built-in agent name, naming the module', async () => {
    await expect(loadAgentModules([path.join(support, 'clashing.ts')])).rejects.toThrow(
      `Agents module ${path.join(support, 'clashing.ts')}: agent "synthetic" is already defined by the built-in agents.`,
    );
  });

  it('refuses a module without agents, a missing one, and one agent in two modules', async () => {
    const config = path.join(__dirname, '..', '..', '..', 'src', 'config.ts');
    await expect(loadAgentModules([config])).rejects.toThrow(`Agents module ${config} exports no agent`);
    await expect(loadAgentModules(['nope.ts'], support)).rejects.toThrow(
      `Could not load agents module ${path.join(support, 'nope.ts')}`,
    );
    const copy = path.join(support, 'research-copy.ts');
    await expect(loadAgentModules(['research.ts', copy], support)).rejects.toThrow(
      `Agents module ${copy}: agent "research" is already defined by ${path.join(support, 'research.ts')}.`,
    );
  });

  it("generates an entry re-exporting Fairway's workflows and registering each module", () => {
    const src = agentEntrySource(['/a/x.ts', '/b/y.ts']);
    expect(src).toContain(`export * from ${JSON.stringify(workflowsPath)};`);
    expect(src).toContain(`import * as m0 from "/a/x.ts";`);
    expect(src).toContain(`import * as m1 from "/b/y.ts";`);
    expect(src).toContain('registerAgents(m0, m1);');
  });
});
