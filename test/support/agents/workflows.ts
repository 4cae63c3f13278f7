/**
 * A test-only workflow bundle entry, the shape the worker generates for a user's agents modules:
 * Fairway's workflows, and the user's agents registered with them.
 */
import { registerAgents } from '../../../src/workflows/agent-registry';
import * as echoAgents from './echo-agents';

export * from '../../../src/workflows';

registerAgents(echoAgents);
