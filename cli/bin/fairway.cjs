#!/usr/bin/env node
// The `fairway` operator command, built (`npm pack` runs the build) from the clone's src/cli.
require('../dist/cli/index.js');
