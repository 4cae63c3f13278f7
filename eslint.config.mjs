import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const ENTRY = ['./src/entry', './src/stack.ts', './src/main.ts', './src/cli'];
const ABOVE_FLEET = ['./src/api', './src/console', './src/modelplane', './src/infra', ...ENTRY];
const ABOVE_ACTIVITIES = ['./src/fleet', './src/config.ts', ...ABOVE_FLEET];
const ABOVE_CONTRACT = ['./src/workflows', './src/activities', ...ABOVE_ACTIVITIES];

/** Who may not import whom (`import-x/no-restricted-paths`); test/unit/layers.test.ts proves it bites. */
export const LAYER_ZONES = [
  {
    target: './src/scheduler',
    from: './src',
    except: ['./scheduler'],
    message: 'The policy core imports nothing.',
  },
  {
    target: './src/util',
    from: './src',
    except: ['./util'],
    message: 'src/util imports nothing of Fairway.',
  },
  { target: './src/agents', from: './src', except: ['./agents'], message: 'The agent catalog is a leaf.' },
  { target: './src/contract', from: ABOVE_CONTRACT, message: 'The contract sits below the workflows.' },
  {
    target: './src/workflows',
    from: './src/activities',
    message: 'Workflows import activity signatures from src/contract (activity-types).',
  },
  {
    target: './src/workflows',
    from: ABOVE_ACTIVITIES,
    message: 'Workflows import the core and the contract.',
  },
  {
    target: './src/activities',
    from: ABOVE_ACTIVITIES,
    message: 'Activities sit below the fleet: inject what they need.',
  },
  { target: './src/fleet', from: ABOVE_FLEET, message: 'The fleet sits below the API and the entry points.' },
  {
    target: './src/api',
    from: ['./src/modelplane', './src/infra', ...ENTRY],
    message: 'The API sits below the entry points.',
  },
  {
    target: './src/console',
    from: ['./src/modelplane', './src/infra', ...ENTRY],
    message: "The console is part of the API's layer: below the entry points.",
  },
  {
    target: './src/modelplane',
    from: './src',
    except: ['./modelplane', './activities/provider'],
    message: "The simulator stands for an outside provider: it may share only the client's provider code.",
  },
];

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.tools', 'data', 'bench/results', 'test/fixtures'] },
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
    // One-way layers: util, agents, core (scheduler) <- contract <- workflows <- activities <- fleet <- api,
    // with the entry points (src/entry, src/stack.ts, src/main.ts) on top. The simulator (src/modelplane)
    // stands for an outside provider: it may borrow the client's header code, nothing else.
    files: ['src/**/*.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { zones: LAYER_ZONES }] },
  },
  {
    // The workflow sandbox: deterministic code only. No Node built-ins, no env, no clocks or randomness
    // of the host, no value imports of activities.
    files: ['src/workflows/**/*.ts', 'src/scheduler/**/*.ts', 'src/contract/**/*.ts'],
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
    // Tests and benches read JSON replies: `any` there is the honest type of a parsed body.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The console page's own script runs in the browser (uPlot is loaded before it by a script tag).
    files: ['src/console/static/**/*.js'],
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
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    // The `fairway` bin: a CommonJS shim that loads the TypeScript command through tsx.
    files: ['bin/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.mts'],
    ...tseslint.configs.disableTypeChecked,
  },
);
