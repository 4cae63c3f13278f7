/**
 * Call keys whose charge (or correction) the ledger holds and whose owner has not yet said the
 * charge is settled in its durable call store: a second delivery of the same key (a sweep charging
 * a dead worker's call again, a reconciler sending a correction again) changes nothing. Bounded:
 * an owner confirms what it settled (`forget`), and past `MAX_CHARGE_KEYS` the oldest go first,
 * which are those of owners that died before confirming (their calls are settled already, or
 * charged again within seconds by a sweep).
 */
export const MAX_CHARGE_KEYS = 512;

/** Characters of an id: 36^8 ≈ 2^41, so two keys held at once collide with odds ~ 10^-9. */
const ID_LENGTH = 8;
const ID_SPACE = 36 ** ID_LENGTH;

/** cyrb53: a fast 53-bit string hash (deterministic, no Node built-in: it runs in the workflow sandbox). */
function hash53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const shortId = (s: string): string => (hash53(s) % ID_SPACE).toString(36).padStart(ID_LENGTH, '0');

/** The ledger's id of a call's charge (`correction` false) or of its correction (true). */
export function chargeId(key: string, correction = false): string {
  return shortId(correction ? `${key}#correction` : key);
}

/** The ledger's id of a call charges owner (a worker process's `CallCharges.owner`). */
export function ownerId(owner: string): string {
  return shortId(`${owner}#owner`);
}

/**
 * Fenced owners remembered: more than workers are taken for dead while one stalled worker still
 * holds charges, and few enough to keep the continue-as-new input within its bound.
 */
export const MAX_FENCED_OWNERS = 64;

/**
 * Ids held oldest first (a Set keeps insertion order), at most `max`: past it the oldest goes. The
 * snapshot's form is the ids joined by " ".
 */
abstract class BoundedIds {
  protected readonly ids = new Set<string>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.ids.size;
  }

  /** Holds `id` as the newest. */
  protected hold(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    while (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value as string);
  }

  /** The ids, oldest first, joined by " " (the snapshot's form). */
  snapshot(): string {
    return [...this.ids].join(' ');
  }
}

/** The ids of a snapshot's form, oldest first. */
const parseIds = (s: string | undefined): string[] => (s ?? '').split(' ').filter(Boolean);

/**
 * Owners a sweep fenced (`ownerId`): their calls were taken over and are charged by the sweep, so
 * a charge that still comes from one of them (held in its mailbox while it was stalled) is not
 * booked. Bounded: past `MAX_FENCED_OWNERS` the one fenced longest ago goes first.
 */
export class FencedOwners extends BoundedIds {
  constructor(max = MAX_FENCED_OWNERS) {
    super(max);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  fence(ids: readonly string[]): void {
    for (const id of ids) this.hold(id);
  }

  static restore(s: string | undefined, max = MAX_FENCED_OWNERS): FencedOwners {
    const owners = new FencedOwners(max);
    owners.fence(parseIds(s));
    return owners;
  }
}

/** Charge ids held, oldest first. */
export class ChargeKeys extends BoundedIds {
  constructor(max = MAX_CHARGE_KEYS) {
    super(max);
  }

  /** Whether `id` is new: then it is held (the oldest goes when full). */
  admit(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.hold(id);
    return true;
  }

  /** Forgets ids their owner settled durably: no sweep or reconciler sends them again. */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.ids.delete(id);
  }

  static restore(s: string | undefined, max = MAX_CHARGE_KEYS): ChargeKeys {
    const keys = new ChargeKeys(max);
    for (const id of parseIds(s)) keys.admit(id);
    return keys;
  }
}
