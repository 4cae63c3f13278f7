import { z } from 'zod';
import { defineAgent } from '../../../src/agent';

/** An agents module whose agent takes a built-in agent's name (the worker must refuse to start). */
export const synthetic = defineAgent({
  name: 'synthetic',
  input: z.object({}),
  estimate: 100,
  async run() {
    return {};
  },
});
