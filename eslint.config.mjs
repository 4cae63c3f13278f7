import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const CORE = ['./util', './scheduler'];
const AGENT_CODE = ['./agent', './agents'];
const BELOW_FLEET = [
  ...CORE,
  ...AGENT_CODE,
  './contract',
  './config.ts',
  './stores',
  './workflows',
  './activities',
];

/**
 * Every room of src/ (a top-level folder or file, as a path under ./src) and the rooms it may import
 * besides itself. A room imports only downward; a folder or file under src/ in no room fails
 * test/unit/layers.test.ts, and no room may import it.
 */
export const ROOMS = {
  './util': { may: [], why: 'src/util imports nothing of Fairway.' },
  './scheduler': { may: [], why: 'The policy core imports nothing.' },
  './contract': { may: CORE, why: 'The contract (types, messages, pure helpers) sits on the core only.' },
  './agent': {
    may: ['./contract'],
    why: 'The agent-authoring API (defineAgent, the context an agent runs with) sits on the contract only.',
  },
  './agents': {
    may: ['./agent', './contract'],
    why: 'The built-in agents are written on the public authoring API, as a user would write theirs.',
  },
  './config.ts': {
    may: [...CORE, './agents', './contract'],
    why: 'The config reads the environment, the core and the built-in agents.',
  },
  './stores': {
    may: [...CORE, './contract'],
    why: 'The stores (one folder each, SQLite and PostgreSQL) sit on the contract and the core.',
  },
  './workflows': {
    may: [...AGENT_CODE, './scheduler', './contract'],
    why: 'Workflows import the core, the agents and the contract (activity signatures included).',
  },
  './activities': {
    may: [...CORE, ...AGENT_CODE, './contract', './stores'],
    why: 'Activities sit below the fleet: inject what they need.',
  },
  './standins': {
    may: ['./activities/provider'],
    why: "Stand-ins for outside services: they may share only the model client's provider code.",
  },
  './fleet': { may: BELOW_FLEET, why: 'The fleet sits below the API and the entry points.' },
  './api': {
    may: [...BELOW_FLEET.filter((r) => r !== './activities'), './fleet'],
    why: 'The API (console, events) sits below the entry points and reaches activities only through the fleet.',
  },
  './client': {
    may: ['./agent', './contract'],
    why: 'The typed HTTP client sits on the wire contract and the agent types only (no server code).',
  },
  './infra': {
    may: [...CORE, './contract', './config.ts'],
    why: 'Dev-server and cluster tooling sits below the entry points.',
  },
};
/** The entry points: they may import every room. */
const ENTRY = ['./entry', './cli', './stack.ts', './main.ts', './index.ts'];
const ALL_ROOMS = [...Object.keys(ROOMS), ...ENTRY];
for (const top of ENTRY) ROOMS[top] = { may: ALL_ROOMS, why: 'The entry points import only rooms of src/.' };

/** What the workflow bundle (src/workflows/index.ts) may load; test/unit/layers.test.ts checks it. */
export const SANDBOX = [
  'src/workflows/**/*.ts',
  'src/scheduler/**/*.ts',
  'src/contract/**/*.ts',
  'src/agents/**/*.ts',
  'src/agent/**/*.ts',
];

/** Who may not import whom (`import-x/no-restricted-paths`); test/unit/layers.test.ts proves it bites. */
export const LAYER_ZONES = Object.entries(ROOMS).map(([room, { may, why }]) => ({
  target: `./src/${room.slice(2)}`,
  from: './src',
  except: [room, ...may.filter((r) => r !== room)],
  message: why,
}));

export default tseslint.config(
  { ignores: ['node_modules', 'dist', 'cli/dist', '.tools', 'data', 'bench/results', 'test/fixtures'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    // Resolve extensionless TypeScript imports, or the import-x rules below see nothing.
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'] })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
    },
  },
  {
    // One-way layers (ROOMS): util, agents, core (scheduler) <- contract <- workflows | activities <- fleet
    // <- api, with infra beside the API and the entry points (src/entry, src/cli, src/stack.ts,
    // src/main.ts) on top. The stand-ins (src/standins) play outside services.
    files: ['src/**/*.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { zones: LAYER_ZONES }] },
  },
  {
    // The workflow sandbox: deterministic code only. No Node built-ins, no env, no clocks or randomness
    // of the host, no value imports of activities.
    files: SANDBOX,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'No Node built-ins in workflow or policy code.',
          })),
          patterns: [
            {
              group: ['**/activities', '**/activities/*'],
              message: 'Activity signatures are in src/contract/activity-types (proxyActivities).',
            },
            {
              group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
              message: 'Not available in the workflow sandbox.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process/env in workflow code: read config outside and pass it in.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() in a loop.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Not deterministic.' },
      ],
    },
  },
  {
    files: ['src/scheduler/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'The policy core is pure.' })),
          patterns: [
            {
              group: ['@temporalio/*', '../*'],
              message: 'The policy core imports nothing outside src/scheduler.',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Pass `now` in: the core has no clock.',
        },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'Pass `now` in: the core has no clock.',
        },
      ],
    },
  },
  {
    // Workers' scheduler updates share the fleet's permits (WORKER_UPDATE_PERMITS): each goes through
    // schedulerUpdates, which holds one, so none bypasses the share of the 10 updates in flight.
    files: ['src/activities/**/*.ts'],
    ignores: ['src/activities/scheduler-updates.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='executeUpdate']",
          message:
            'Send scheduler updates through schedulerUpdates (scheduler-updates.ts): it holds a permit.',
        },
      ],
    },
  },
  {
    // Tests and benches read JSON replies: `any` there is the honest type of a parsed body.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The console page's own scripts run in the browser (uPlot is loaded before it by a script tag).
    files: ['src/api/console/static/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'sessionStorage',
          'fetch',
          'uPlot',
          'ResizeObserver',
          'setTimeout',
          'clearTimeout',
          'CustomEvent',
          'URLSearchParams',
          'FormData',
          'location',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    // The `fairway` bins: CommonJS shims that load the command (through tsx in a clone, built in cli/).
    files: ['bin/*.cjs', 'cli/bin/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.mts'],
    ...tseslint.configs.disableTypeChecked,
  },
);
