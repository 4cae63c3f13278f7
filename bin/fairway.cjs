#!/usr/bin/env node
// The `fairway` command: runs the TypeScript source through tsx (a runtime dependency), its ESM hook
// included: `fairway worker` imports the user's TypeScript modules (agents, effects, tools).
require('tsx/cjs');
import('tsx/esm/api').then(({ register }) => {
  register();
  require('../src/cli/index.ts');
});
