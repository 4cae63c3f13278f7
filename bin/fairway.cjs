#!/usr/bin/env node
// The `fairway` operator command: runs the TypeScript source through tsx (a runtime dependency).
require('tsx/cjs');
require('../src/cli/index.ts');
