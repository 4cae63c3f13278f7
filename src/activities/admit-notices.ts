import { mapLimit } from '../util/map-limit';

/**
 * How long an admission's notice waits for its run's workflow to exist. Decide, then start: a unit
 * that waits in the queue is submitted before its run is started, so its admission may come first;
 * the run is being started by its submitter then. A run still missing after this is an orphan (its
 * submitter died between decision and start): its slot comes back.
 */
export const ADMIT_NOTICE_GRACE_MS = 3_000;

/** The first wait before a missing run is tried again; ×2 after each try, within the grace. */
const FIRST_RETRY_MS = 100;

/**
 * Sends each notice (`send` answers false when the run's workflow is not found); those not found are
 * tried again together, backing off, until `graceMs` has passed since the first try. Answers the
 * notices that never found their run. A missing run holds no notice lane: every notice is tried once
 * before any is retried.
 */
export async function noticesWithGrace<N>(
  notices: readonly N[],
  send: (n: N) => Promise<boolean>,
  graceMs = ADMIT_NOTICE_GRACE_MS,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<N[]> {
  const deadline = Date.now() + graceMs;
  let missing = await tryAll(notices, send);
  for (let wait = FIRST_RETRY_MS; missing.length > 0; wait *= 2) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(wait, left));
    missing = await tryAll(missing, send);
  }
  return missing;
}

async function tryAll<N>(notices: readonly N[], send: (n: N) => Promise<boolean>): Promise<N[]> {
  const reached = await mapLimit([...notices], 32, send);
  return notices.filter((_, i) => !reached[i]);
}
