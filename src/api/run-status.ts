import type { RunStatus } from '../contract/fleet-port';

/** A record, so that the compiler fails here when RunStatus gains a member. */
const STATUSES: Record<RunStatus, true> = {
  queued: true,
  running: true,
  awaiting_approval: true,
  completed: true,
  failed: true,
  cancelled: true,
};

export const RUN_STATUSES = Object.keys(STATUSES) as [RunStatus, ...RunStatus[]];
