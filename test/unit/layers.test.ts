import path from 'node:path';
import { ESLint } from 'eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- the ESLint config is plain JavaScript without types
import { LAYER_ZONES } from '../../eslint.config.mjs';

const root = path.resolve(__dirname, '../..');
const RULE = 'import-x/no-restricted-paths';

/** Lints `code` as if it were the file at `file` (not written to disk), with the repository's layer zones. */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { 'import-x': importX },
        settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })] },
        rules: { [RULE]: ['error', { zones: LAYER_ZONES }] },
      },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === RULE).map((m) => m.message);
}

describe('one-way layers (lint)', () => {
  it('the repository config applies the layer rule to source files', async () => {
    const config = (await new ESLint({ cwd: root }).calculateConfigForFile('src/fleet/worker.ts')) as {
      rules: Record<string, unknown[]>;
    };
    expect(config.rules[RULE]?.[1]).toEqual({ zones: LAYER_ZONES });
  });

  it.each([
    ['src/fleet/probe.ts', "import { createApp } from '../api/app';"],
    ['src/activities/probe.ts', "import { startRunWorkflow } from '../fleet/start-run';"],
    [
      'src/workflows/probe.ts',
      "import type { FleetPort } from '../contract/fleet-port';\nimport { createActivities } from '../activities';",
    ],
    ['src/contract/probe.ts', "import type { RunState } from '../workflows/run-state';"],
    ['src/scheduler/probe.ts', "import type { RunSpec } from '../contract/fleet-port';"],
    ['src/activities/probe.ts', "import { startSimulator } from '../modelplane';"],
    ['src/modelplane/probe.ts', "import { createActivities } from '../activities';"],
  ])('reports an upward import in %s', async (file, code) => {
    const errors = await layerErrors(file, code);
    expect(errors.length).toBe(1);
    expect(errors[0]).toMatch(/restricted zone/);
  });

  it.each([
    ['src/workflows/probe.ts', "import type { FleetActivities } from '../contract/activity-types';"],
    ['src/activities/probe.ts', "import type { RunSpec } from '../contract/fleet-port';"],
    ['src/modelplane/probe.ts', "import { estimateTextTokens } from '../activities/provider/tokens';"],
    ['src/api/probe.ts', "import { withTimeout } from '../util/with-timeout';"],
  ])('allows a downward import in %s', async (file, code) => {
    expect(await layerErrors(file, code)).toEqual([]);
  });
});
