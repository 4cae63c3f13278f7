import { proxyActivities } from '@temporalio/workflow';
import type { FleetActivities } from '../contract/activity-types';

/** The usage floor of a recovery (visibility): slow, retried a few times. */
export const { recoverUsage } = proxyActivities<FleetActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/**
 * The scheduler's notices to runs. A few hundred idempotent signals take a second; a worker killed
 * mid-notice must not leave its runs unaware of their admission until their leases expire, so the
 * retry comes quickly.
 */
export const { notifyAdmissions, notifyRevoked, notifyBudgetRefused } = proxyActivities<FleetActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
});

/**
 * The pull of worker reports: it waits up to REPORT_PULL_WAIT_MS for a first report, heartbeating, so
 * a pull whose worker died is run again after the heartbeat timeout, not after its start-to-close
 * timeout: no report is booked while the chain's one pull is out, and leases would expire meanwhile.
 * Retried without end (the log is the only way such reports come), quickly while it fails.
 */
export const { pullReports } = proxyActivities<FleetActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '3 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '5s' },
});
