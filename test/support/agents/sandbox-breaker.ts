import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defineAgent } from '../../../src/agent';

/** An agents module that breaks the workflow sandbox: it reads a file (the worker must refuse to start). */
export const reader = defineAgent({
  name: 'reader',
  input: z.object({ file: z.string() }),
  estimate: 100,
  async run(_ctx, input) {
    return { text: readFileSync(input.file, 'utf8') };
  },
});
