/** A test-only workflow bundle entry: Fairway's workflows with the `regate` agent registered. */
import { registerAgents } from '../../../src/workflows/agent-registry';
import * as regateAgents from './regate';

export * from '../../../src/workflows';

registerAgents(regateAgents);
