import type { PulledReports, ReportPull } from '../contract/activity-types';
import type { WorkerReport } from '../contract/scheduler-messages';
import type { ReportLog } from '../stores/report-log/report-log';

/** Most rows one pull reads. */
export const MAX_PULL_ROWS = 500;
/** A pull stops adding rows past this many bytes of reports (an activity result stays well under 2 MB). */
export const MAX_PULL_BYTES = 512 * 1024;
/** How often a waiting pull reads the log again. */
export const PULL_POLL_MS = 20;
/** Booked rows are kept this long (a chain reset to a cursor this old finds them), then deleted. */
export const KEEP_BOOKED_MS = 10 * 60_000;
/** How often a worker prunes a scheduler's booked rows. */
const PRUNE_EVERY_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The scheduler's pull of worker reports (`REPORTS=pull`): acknowledges the cursor it is given (the
 * scheduler booked everything up to it), then answers the reports past it, waiting up to `waitMs` for
 * the first. A retried pull is given the same cursor and answers the same reports, so the scheduler,
 * which moves its cursor only with the answer it books, books each report once.
 */
export function reportPull(
  log: ReportLog | undefined,
  opts: {
    waitMs: number;
    now?: () => number;
    stopping?: () => boolean;
    /** Says the pull is alive (the activity's heartbeat): a pull whose worker died is run again within seconds. */
    beat?: () => void;
  },
): (req: ReportPull) => Promise<PulledReports> {
  const now = opts.now ?? Date.now;
  const prunedAt = new Map<string, number>();
  return async ({ schedulerId, after }) => {
    if (!log) throw new Error('this worker has no report log (REPORTS=pull needs the call intents store)');
    if (after !== null) await log.ack(schedulerId, after);
    const from = after ?? (await log.acked(schedulerId));
    if (now() - (prunedAt.get(schedulerId) ?? 0) > PRUNE_EVERY_MS) {
      prunedAt.set(schedulerId, now());
      await log.prune(schedulerId, now() - KEEP_BOOKED_MS);
    }
    const deadline = now() + opts.waitMs;
    let rows = await log.read(schedulerId, from, MAX_PULL_ROWS);
    // A stopping worker answers at once: its pull must not outlive it (nor reach a server shutting down).
    while (rows.length === 0 && now() < deadline && !opts.stopping?.()) {
      opts.beat?.();
      await sleep(PULL_POLL_MS);
      rows = await log.read(schedulerId, from, MAX_PULL_ROWS);
    }
    const reports: WorkerReport[] = [];
    let bytes = 0;
    let cursor = from;
    for (const row of rows) {
      if (reports.length > 0 && bytes + row.body.length > MAX_PULL_BYTES) break;
      bytes += row.body.length;
      cursor = row.seq;
      try {
        reports.push(JSON.parse(row.body) as WorkerReport);
      } catch {
        // Not JSON: nothing to book (the scheduler cleans what it books anyway).
      }
    }
    return { reports, after: cursor };
  };
}
