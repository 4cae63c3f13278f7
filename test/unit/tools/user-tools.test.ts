import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { agentTaskQueue } from '../../../src/agent/define';
import { createUserToolActivity, identityOf } from '../../../src/activities/tool-activities';
import { toolTaskQueue } from '../../../src/contract/tool-registry';

const SALT = 'deployment-salt-for-tests-0123456789';

const call = (tool: string, agent = 'research') => ({
  tool,
  agent,
  runId: 'run-t-1',
  key: 'run-t-1:search-1',
  args: { q: 'why' },
});

describe("a user's tool", () => {
  it('is served under the base queue, also when named from a run on its agent queue', () => {
    expect(toolTaskQueue('fleet', 'search')).toBe('fleet.tool.search');
    expect(toolTaskQueue(agentTaskQueue('fleet', 'research'), 'search')).toBe('fleet.tool.search');
    expect(toolTaskQueue('fleet.agents', 'search')).toBe('fleet.agents.tool.search');
  });

  it('acts as its own identity, with its credential handed to its function only', async () => {
    const seen: unknown[] = [];
    const acts = createUserToolActivity({
      name: 'search',
      credential: 'search-secret',
      identitySalt: SALT,
      handler: async (args, ctx) => {
        seen.push(ctx);
        return { hit: `found ${String(args.q)}` };
      },
    });
    const r = await acts.search!(call('search'));
    expect(r).toEqual({ identity: identityOf('search', 'search-secret', SALT), data: { hit: 'found why' } });
    expect(JSON.stringify(r)).not.toContain('search-secret');
    expect(seen).toEqual([
      {
        credential: 'search-secret',
        identity: identityOf('search', 'search-secret', SALT),
        key: 'run-t-1:search-1',
        runId: 'run-t-1',
        agent: 'research',
      },
    ]);
  });

  it('refuses agents outside its list and answers that are not JSON objects, for good', async () => {
    const acts = createUserToolActivity({
      name: 'search',
      credential: 'c',
      identitySalt: SALT,
      agents: ['research'],
      handler: async (args) => {
        if (args.q === 'list') return [] as unknown as Record<string, unknown>;
        if (args.q === 'bigint') return { n: 10n };
        if (args.q === 'cycle') {
          const c: Record<string, unknown> = {};
          c.self = c;
          return c;
        }
        return {};
      },
    });
    await expect(acts.search!(call('search', 'other'))).rejects.toMatchObject({
      type: 'ToolNotDeclared',
      nonRetryable: true,
    });
    const bad = await acts.search!({ ...call('search'), args: { q: 'list' } }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApplicationFailure);
    expect(bad).toMatchObject({ type: 'ToolResultInvalid', nonRetryable: true });
    // Not JSON: refused for good here, not retried by a result that fails to encode.
    for (const q of ['bigint', 'cycle'])
      await expect(acts.search!({ ...call('search'), args: { q } })).rejects.toMatchObject({
        type: 'ToolResultInvalid',
        nonRetryable: true,
      });
  });
});
