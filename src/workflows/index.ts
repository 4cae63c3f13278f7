export { schedulerWorkflow } from './scheduler';
export { runWorkflow } from './run';
export { batchWorkflow } from './batch';
