/**
 * A test-only workflow bundle entry: Fairway's workflows, and the model-load agent (ctx.model calls
 * only) registered with them.
 */
import { registerAgents } from '../../../src/workflows/agent-registry';
import * as modelLoadAgents from './model-load';

export * from '../../../src/workflows';

registerAgents(modelLoadAgents);
