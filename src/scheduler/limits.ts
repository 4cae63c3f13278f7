/**
 * The hard limits the scheduler's state is sized against. The API enforces the id forms; the
 * scheduler workflow's update validators refuse anything longer; the core clamps fleet settings to
 * these maxima. Together they bound the continue-as-new input (see `snapshot-bound.test.ts` and
 * docs/operating.md, "The scheduler's bounded state"): at every maximum, with the longest legal
 * ids, it stays ≤ 1 MiB.
 */

/** Tenant ids: 1–64 characters of a-z, 0-9 and "-" (the API's `TenantIdSchema`). */
export const MAX_TENANT_ID_LENGTH = 64;
export const TENANT_ID_PATTERN = /^[a-z0-9-]{1,64}$/;

/**
 * Run ids. The API makes two forms, and the scheduler workflow accepts only these (its submit
 * validator), so every queued or leased id has a compact code (`id-codec.ts`):
 * `run-<tenant>-<20 hex>` (89 characters at most) and batch items
 * `batch-<tenant>-<16 hex>-<index < BATCH_MAX_ITEMS>` (92 at most).
 */
export const MAX_RUN_ID_LENGTH = 92;
const RUN_SUFFIX = /^[0-9a-f]{20}$/;
const BATCH_SUFFIX = /^[0-9a-f]{16}-(?:0|[1-9][0-9]{0,3})$/;

/** Whether `runId` is one of the API's id forms for `tenant`. */
export function isApiRunId(runId: string, tenant: string): boolean {
  if (runId.startsWith(`run-${tenant}-`)) return RUN_SUFFIX.test(runId.slice(tenant.length + 5));
  if (runId.startsWith(`batch-${tenant}-`)) return BATCH_SUFFIX.test(runId.slice(tenant.length + 7));
  return false;
}

/** Largest attempt number a submission may carry (a run re-queues once per lost lease). */
export const MAX_ATTEMPT = 1_000_000;

/** Largest `globalMaxQueued` (GLOBAL_MAX_QUEUED) the core accepts; larger values are clamped. */
export const MAX_GLOBAL_QUEUED = 20_000;

/** Largest fleet `concurrency` (FLEET_CONCURRENCY, PATCH /v1/admin/scheduler); bounds the leases held. */
export const MAX_CONCURRENCY = 2_000;

/**
 * Tenants the core holds at once. Idle tenants (nothing queued or in flight, nothing spent in a
 * budgeted period) leave the core at continue-as-new and come back from the API's tenant store on
 * their next submission; when the core is full of busy tenants a new one is refused for a moment.
 */
export const MAX_CORE_TENANTS = 1_000;

/** How long a tenant stays idle before it leaves the core at continue-as-new. */
export const TENANT_IDLE_EVICT_MS = 60 * 60 * 1000;

/**
 * Retries (attempt > 0: runs that were admitted once and lost their lease) may queue past
 * `maxQueued` and `globalMaxQueued`, but only by this share of the cap (at least RETRY_HEADROOM_MIN),
 * so the queue has a hard bound: globalMaxQueued × (1 + RETRY_HEADROOM_SHARE).
 */
export const RETRY_HEADROOM_SHARE = 0.1;
export const RETRY_HEADROOM_MIN = 10;

/** A cap plus the headroom retries may use. */
export function withRetryHeadroom(cap: number): number {
  return cap + Math.max(RETRY_HEADROOM_MIN, Math.ceil(cap * RETRY_HEADROOM_SHARE));
}

/** Largest token figure (an estimate, a budget) the API accepts. */
export const MAX_TOKENS = 1_000_000_000;

/** Units in one submit update, tenants in one upsertTenants update. */
export const MAX_UNITS_PER_SUBMIT = 10_000;
export const MAX_TENANTS_PER_UPSERT = 1_000;

/** A model pool's name (`pools.ts`): the form the validators accept. */
export const POOL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/**
 * Fairness keys inside a tenant (`key-queue.ts`). A flow (one tenant, one lane) holds at most
 * MAX_FLOW_KEYS key slots: up to MAX_FLOW_KEYS − FLOW_KEY_BUCKETS (240) keys of their own, then a
 * new key joins one of FLOW_KEY_BUCKETS buckets by a stable hash of its string (its units share the
 * bucket's turns). A slot is held while it has units queued, or while it still owes service (its tag
 * ahead of the flow's virtual time); so a tenant holds at most 3 × 256 = 768 slots, the core
 * MAX_CORE_TENANTS × 768, whatever the number of keys its callers use. The continue-as-new snapshot
 * writes only slots of flows with units queued, and a slot only when some unit or tag needs it.
 */
export const MAX_FLOW_KEYS = 256;
export const FLOW_KEY_BUCKETS = 16;

/** A fairness key: 1–64 characters, no "#" (the buckets' names) and no spaces (the API validates). */
export const MAX_FAIRNESS_KEY_LENGTH = 64;
export const FAIRNESS_KEY_PATTERN = /^[A-Za-z0-9._:@|/+=-]{1,64}$/;

/** Entries of a tenant's `keyWeights`. */
export const MAX_KEY_WEIGHTS = 64;

/**
 * Key slots the continue-as-new snapshot writes under their own names, fleet-wide (tenants in the
 * core's order, lanes, slots in the order their flow made them). Past it a backlogged slot's units are
 * written under its hash bucket and share the bucket's turns after the restore, as keys past
 * MAX_FLOW_KEYS do; this keeps the snapshot within 1 MiB with every queued unit under a key of its own.
 */
export const MAX_SNAPSHOT_KEY_SLOTS = 1_024;
