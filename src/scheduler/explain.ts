import { fleetCap, inFlightTokens } from './admission';
import type { CoreState } from './core';
import { isHeld } from './eligibility';
import { keyPosition, serviceOrder } from './key-position';
import { breakerWait } from './breaker';
import { bucketReadyAt, concurrencyCap, inFlightTokenCap, isPaused } from './governor';
import { poolHeldFor } from './pass-over';
import { DEFAULT_POOL, governorOf, overPoolInFlight, poolInFlightTokens } from './pools';
import { admissibleLanes, floorOf } from './lanes';
import { remainingAt } from './ledger';
import { laneMayTake, reservedSlots } from './reserve';
import type { Flow, QueuedUnit } from './queue-state';
import { PRIORITIES } from './types';
import type { WaitingOn } from './types';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * 1-based place of `u` in the order its lane would admit the queued units, predicted
 * from the fair-queuing tags as they stand (parked tenants assumed to re-enter now).
 * O(units in the lane): for queries only.
 */
export function positionInLane(s: CoreState, u: QueuedUnit, ownAhead = keyPosition(u).ahead): number {
  const q = s.lanes[u.lane];
  const startTag = (f: Flow) => (f.hi >= 0 ? f.tag : Math.max(f.tag, q.vtime));
  const own = u.tenant.flows[u.lane];
  // Its own tenant's units go in key order (`key-position.ts`); with no keys that is the flow's FIFO.
  let ahead = ownAhead.length;
  let myTag = startTag(own);
  for (const v of ownAhead) myTag += v.cost / u.tenant.settings.weight;
  for (const t of s.tenants.values()) {
    const f = t.flows[u.lane];
    if (f === own || f.live === 0) continue;
    let tag = startTag(f);
    for (const v of serviceOrder(f)) {
      if (tag > myTag || (tag === myTag && t.ord > u.tenant.ord)) break;
      ahead++;
      tag += v.cost / t.settings.weight;
    }
  }
  return ahead + 1;
}

/**
 * What the unit at the head of `u`'s queue lacks in tokens, when it does not fit now: the tokens in
 * flight (freed as running units are charged or end) or the bucket (refilled with time); else null.
 */
function waitForTokens(s: CoreState, u: QueuedUnit, head: QueuedUnit, now: number): string | null {
  const g = governorOf(s, head.pool);
  const who = head === u ? 'This unit needs' : `The unit ahead of it in its queue (${head.runId}) needs`;
  const inFlight = poolInFlightTokens(s, inFlightTokens).get(head.pool) ?? 0;
  const governor = `the token governor${poolNamed(head.pool)}`;
  if (overPoolInFlight(s, head.pool, inFlight, head.cost)) {
    const cap = Math.round(inFlightTokenCap(g, s.settings.leaseTtlSeconds));
    return `${who} ${head.cost} tokens and ${inFlight} are in flight; ${governor} allows ${cap} in flight, so it waits for running units to end.`;
  }
  const at = bucketReadyAt(g, head.cost, now);
  if (at <= now || s.leases.size >= fleetCap(s)) return null;
  return `${who} ${head.cost} tokens; ${governor}'s allowance of ${Math.round(g.tokensPerMinute)} tokens per minute covers it at ${iso(at)}.`;
}

/** ` of model pool "name"`, or nothing for the default pool. */
const poolNamed = (pool: string) => (pool === DEFAULT_POOL ? '' : ` of model pool "${pool}"`);

/** Why a queued unit is still waiting, the most binding reason first; null when it is not queued (pure). */
export function explain(s: CoreState, runId: string, now: number): WaitingOn | null {
  const u = s.queued.get(runId);
  if (!u) return null;
  const lane = PRIORITIES[u.lane];
  const keyed = keyPosition(u);
  const position = positionInLane(s, u, keyed.ahead);
  // The key's place is shown once the tenant queues keyed units in this lane (not for one default key).
  const byKey = u.key !== '' || keyed.position.keysQueued > 1;
  const w = (code: WaitingOn['code'], message: string): WaitingOn => ({
    code,
    message,
    position,
    lane,
    ...(u.key !== '' ? { fairnessKey: u.key } : {}),
    ...(byKey ? { keyPosition: keyed.position } : {}),
  });
  const t = u.tenant;
  if (s.draining)
    return w('draining', 'The fleet is draining for maintenance; queued work is held until it resumes.');
  if (t.inFlight >= t.settings.maxInFlight) {
    return w(
      'tenant_in_flight_cap',
      `Tenant ${t.id} has ${t.inFlight} of ${t.settings.maxInFlight} allowed units running; this one starts when one of them finishes.`,
    );
  }
  if (isHeld(t)) {
    return w(
      'budget',
      `The scheduler is recovering tenant ${t.id}'s ledger after it was lost or reset; work under a budget waits until its usage is counted again (seconds).`,
    );
  }
  const left = remainingAt(t.ledger, now);
  const head = t.flows[u.lane].units[t.flows[u.lane].head] as QueuedUnit;
  if (head.cost > left || u.cost > left) {
    return w(
      'budget',
      `Tenant ${t.id}'s token budget has ${Math.max(0, left)} tokens left, not enough for ${Math.max(head.cost, u.cost)}; it waits for running units to settle or the next budget period.`,
    );
  }
  const g = governorOf(s, u.pool);
  const refused = breakerWait(g.breaker, now);
  if (refused !== null)
    return w('provider', `${refused}${u.pool === DEFAULT_POOL ? '' : ` (model pool "${u.pool}")`}`);
  if (isPaused(g, now)) {
    return w(
      'governor',
      `The model provider${poolNamed(u.pool)} asked to back off; admissions resume at ${iso(g.pausedUntil)}.`,
    );
  }
  const govCap = concurrencyCap(g);
  const running = s.leases.inPool(u.pool);
  if (govCap < s.settings.concurrency && running >= govCap) {
    return w(
      'governor',
      `The token governor${poolNamed(u.pool)} holds concurrency at ${govCap} after throttling; ${running} of its units are running.`,
    );
  }
  const cap = fleetCap(s);
  const tokenWait = waitForTokens(s, u, head, now);
  if (tokenWait !== null) return w('governor', tokenWait);
  const held = poolHeldFor(s, u.pool, now);
  if (held !== null && held.unit !== u) {
    return w(
      'governor',
      `Admission${poolNamed(u.pool)} is held for ${held.unit.runId}, which has waited since ${iso(held.since)} for room for its ${held.unit.cost} tokens; other units wait until it is admitted.`,
    );
  }
  if (s.leases.size < cap && !laneMayTake(s, u.lane, cap)) {
    return w(
      'priority',
      `${reservedSlots(s, cap)} of ${cap} slots are kept free for interactive work and ${s.leases.size} are busy; the ${lane} lane takes the next slot that frees below them.`,
    );
  }
  const avail = admissibleLanes(s);
  const higher = avail.slice(0, u.lane).some(Boolean);
  if (higher) {
    const pct = Math.round(floorOf(s, u.lane) * 100);
    return w(
      'priority',
      `Higher-priority work is queued ahead; the ${lane} lane still gets at least ${pct}% of admissions.`,
    );
  }
  const k = keyed.position;
  const inTenant = byKey
    ? ` Inside tenant ${t.id}, ${k.keysAhead} of its ${k.keysQueued} keys go first (${k.unitsAheadInTenant} of its units, ${k.unitsAheadInKey} of its own key).`
    : '';
  return w(
    'fair_share',
    `Waiting for its fair share: ${position - 1} units are ahead in the ${lane} lane, interleaved by tenant weight; ${s.leases.size} of ${fleetCap(s)} slots are busy.${inTenant}`,
  );
}
