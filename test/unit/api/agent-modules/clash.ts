import { z } from 'zod';
import { defineAgent } from '../../../../src/agent';

/** An agents module whose agent takes a built-in agent's name. */
export const triage = defineAgent({
  name: 'triage',
  input: z.object({}),
  estimate: 1,
  run: async () => ({}),
});
