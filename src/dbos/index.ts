/**
 * tool-runner/dbos: durable runs on PostgreSQL with DBOS Transact. A run is a workflow with an id
 * you choose; each model request and each tool call is a step; a crashed worker's runs resume on
 * any worker from their last finished step; approvals wait as DBOS messages.
 */
export { durableToolRunner } from './durable-runner.js';
export type {
  DurableRunParams,
  DurableRunResult,
  DurableRunnerOptions,
  DurableStartOptions,
  DurableToolRunner,
  DurableToolRunnerConfig,
} from './durable-runner.js';
export { durableApprovals } from './approvals.js';
export type { DurableApprovals, DurableMessenger } from './approvals.js';
