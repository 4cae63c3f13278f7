import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- the ESLint config is plain JavaScript without types
import { LAYER_ZONES, ROOMS } from '../../eslint.config.mjs';
import { closure, fileGraph, findCycle, roomGraph } from '../support/import-graph';

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
    ['src/activities/probe.ts', "import { startSimulator } from '../standins/modelplane';"],
    ['src/standins/modelplane/probe.ts', "import { createActivities } from '../../activities';"],
    ['src/workflows/probe.ts', "import { openEffectStore } from '../stores/open';"],
    ['src/api/probe.ts', "import { createActivities } from '../activities';"],
    ['src/stores/probe.ts', "import type { TenantView } from '../api/tenant-sync';"],
    ['src/activities/probe.ts', "import type { Config } from '../config';"],
    ['src/infra/probe.ts', "import { createApp } from '../api/app';"],
    ['src/api/probe.ts', "import { tsEntry } from '../infra/ts-entry';"],
  ])('reports an upward import in %s', async (file, code) => {
    const errors = await layerErrors(file, code);
    expect(errors.length).toBe(1);
    expect(errors[0]).toMatch(/restricted zone/);
  });

  it.each([
    ['src/workflows/probe.ts', "import type { FleetActivities } from '../contract/activity-types';"],
    ['src/activities/probe.ts', "import type { RunSpec } from '../contract/fleet-port';"],
    [
      'src/standins/modelplane/probe.ts',
      "import { estimateTextTokens } from '../../activities/provider/tokens';",
    ],
    ['src/cli/probe.ts', "import type { ConsoleState } from '../api/console/sampler';"],
    ['src/api/probe.ts', "import { withTimeout } from '../util/with-timeout';"],
    ['src/api/probe.ts', "import { openStore } from '../stores/open';"],
    ['src/activities/probe.ts', "import type { EffectStore } from '../stores/effects/effect-store';"],
  ])('allows a downward import in %s', async (file, code) => {
    expect(await layerErrors(file, code)).toEqual([]);
  });
});

const src = path.join(root, 'src');

describe('rooms of src/', () => {
  it('puts every top-level folder and file of src/ in a room with a zone', () => {
    const entries = readdirSync(src).map((name) => `./${name}`);
    const targets = new Set((LAYER_ZONES as { target: string }[]).map((z) => z.target));
    expect(entries.filter((e) => !(e in ROOMS))).toEqual([]);
    expect(entries.filter((e) => !targets.has(`./src/${e.slice(2)}`))).toEqual([]);
  });

  it('lets a room import only the rooms it lists, so a folder in no room is out of reach', () => {
    for (const zone of LAYER_ZONES as { from: string; except: string[] }[]) {
      expect(zone.from).toBe('./src');
      const rooms = zone.except.map((allowed) => `./${allowed.split('/')[1]}`);
      expect(rooms.filter((r) => !(r in ROOMS))).toEqual([]);
    }
  });

  it('has no loop between the rooms of src/', () => {
    expect(findCycle(roomGraph(src))).toBeUndefined();
  });

  it('has no circle of files in src/, type-only imports included', () => {
    const cycle = findCycle(fileGraph(src));
    expect(cycle?.map((f) => path.relative(root, f))).toBeUndefined();
  });

  it('finds a loop when there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toBeUndefined();
  });
});

/** The repository's own config builds a TypeScript program on first use: one instance, shared by the cases below. */
const repoLint = new ESLint({ cwd: root });
/** Building that program takes seconds idle and minutes on a loaded machine: a bound no run is meant to meet. */
const REPO_LINT_TIMEOUT_MS = 300_000;

describe('the workflow sandbox (lint)', () => {
  it('covers every file the workflow bundle loads', { timeout: REPO_LINT_TIMEOUT_MS }, async () => {
    const eslint = repoLint;
    const bundle = closure(fileGraph(src), path.join(src, 'workflows', 'index.ts'));
    expect(bundle.length).toBeGreaterThan(10);
    const uncovered: string[] = [];
    for (const file of bundle) {
      const config = (await eslint.calculateConfigForFile(file)) as { rules: Record<string, unknown[]> };
      const globals = JSON.stringify(config.rules['no-restricted-globals'] ?? []);
      if (!globals.includes('"process"')) uncovered.push(path.relative(root, file));
    }
    expect(uncovered).toEqual([]);
  });

  it.each(['src/contract/errors.ts', 'src/workflows/index.ts', 'src/agents/gates.ts'])(
    'refuses a Node built-in in %s',
    { timeout: REPO_LINT_TIMEOUT_MS },
    async (file) => {
      const [result] = await repoLint.lintText(
        "import { createHash } from 'node:crypto';\nexport const h = createHash;\n",
        {
          filePath: path.join(root, file),
        },
      );
      const rules = (result?.messages ?? []).map((m) => m.ruleId);
      expect(rules).toContain('no-restricted-imports');
    },
  );
});
