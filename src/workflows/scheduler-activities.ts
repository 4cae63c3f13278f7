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
