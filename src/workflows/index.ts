export { schedulerWorkflow } from './scheduler';
export { runWorkflow } from './run';
export { batchWorkflow } from './batch';
export { scheduledRunWorkflow } from './scheduled-run';
