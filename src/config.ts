import { z } from 'zod';
import { DEFAULT_GOVERNOR, LATENCY_DEFAULTS, PROBE_DEFAULTS } from './scheduler/defaults';
import { BREAKER_DEFAULTS } from './scheduler/breaker';
import { FALLBACK_FLEET_SETTINGS, MAX_WAIT_BOUND_SECONDS, waitBounds } from './scheduler/fleet-settings';
import { DEFAULT_INTERACTIVE_RESERVE } from './scheduler/reserve';
import { MAX_CONCURRENCY, MAX_GLOBAL_QUEUED, POOL_NAME_PATTERN } from './scheduler/limits';
import { MAX_POOLS } from './scheduler/pools';
import { defaultTenantSettings } from './scheduler/tenants';
import type { FleetSettings, GovernorParams } from './scheduler/types';
import { TOOL_NAMES } from './contract/tool-registry';
import { DEFAULT_EFFECT_MAX_ATTEMPTS, DEFAULT_EFFECT_TIMEOUT_SECONDS } from './contract/effect-policy';
import { gatePolicies } from './agents/gates';
import type { ToolName } from './contract/tool-registry';
import type { ModelDialect } from './contract/chat-model';

const FLEET = FALLBACK_FLEET_SETTINGS;
const TENANT = defaultTenantSettings();

/** What a tenant created without settings gets, and the per-tenant request rate at the door. */
export interface TenantDefaults {
  maxQueued: number;
  maxInFlight: number;
  /** Units submitted per second per tenant, a batch counting each item (token bucket, burst twice this); 0: no limit. */
  ratePerSecond: number;
  /** Other requests per second per tenant: reads, cancels, decisions, `/tenants/me`; a batch resume costs one per item. Default: ratePerSecond. */
  requestRatePerSecond?: number;
}

/** Per-tenant caps on what events draw on (docs/api.md "Limits of the front door"). */
export interface EventCaps {
  /** Triggers one tenant may hold. */
  maxTriggers: number;
  /** Webhook secrets (sources) one tenant may hold. */
  maxWebhookSecrets: number;
  /** The largest trigger `input` template, in bytes of compact JSON. */
  maxTriggerInputBytes: number;
  /** Webhook endpoints (webhooks out) one tenant may register. */
  maxWebhookEndpoints: number;
}

export const DEFAULT_EVENT_CAPS: EventCaps = {
  maxTriggers: 100,
  maxWebhookSecrets: 20,
  maxTriggerInputBytes: 64 * 1024,
  maxWebhookEndpoints: 10,
};

/** How webhook deliveries are retried (WEBHOOK_* settings). */
export interface RetryPolicy {
  /** Attempts in all, the first included; after the last failed one the delivery is `failed`. */
  maxAttempts: number;
  /** The wait after the first failed attempt (ms); each further one doubles it. */
  baseMs: number;
  /** The longest wait between two attempts (ms), a receiver's Retry-After included. */
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 8, baseMs: 5_000, maxMs: 3_600_000 };

/** Per-run caps checked at the door (docs/api.md "Limits"). */
export interface RunCaps {
  /** The most tokens one run may declare or be estimated to use. */
  maxTokens: number;
  /** The longest a run may plan to take, in seconds (by its input, e.g. the synthetic agent's steps × stepMs). */
  maxWallSeconds: number;
}

export const DEFAULT_RUN_CAPS: RunCaps = { maxTokens: 1_000_000, maxWallSeconds: 3600 };

/** MODEL_CALL_TIMEOUT_SECONDS: its default and bounds (the ceiling: what `ctx.model` calls had before it). */
export const DEFAULT_MODEL_CALL_TIMEOUT_SECONDS = 600;
export const MIN_MODEL_CALL_TIMEOUT_SECONDS = 2;
export const MAX_MODEL_CALL_TIMEOUT_SECONDS = 900;

/** The admin token guards every tenant and the fleet: a short one could be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

const int = (def: number) => z.coerce.number().int().nonnegative().default(def);
const share = (def: number) => z.coerce.number().min(0).max(1).default(def);
/** A lane's bound on the expected wait, whole seconds; 0 is none. */
const waitSeconds = () => z.coerce.number().int().min(0).max(MAX_WAIT_BOUND_SECONDS).default(0);
const G = DEFAULT_GOVERNOR;
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));
/** An optional integer in [min, max]; an empty value is unset. */
const optionalInt = (min: number, max: number) =>
  z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(min).max(max).optional());

/*
 * Every environment variable Fairway reads, each with its meaning, grouped as the reference shows them.
 * This is the one source: `npm run docs:config` writes docs/configuration.md and .env.example from it
 * (a unit test fails when they differ), and `loadConfig` parses it. Nothing else reads `process.env`.
 */

const api = {
  PORT: int(3000).describe('HTTP port of the API (`npm run start:api`, `npm start`).'),
  HOST: z
    .string()
    .default('127.0.0.1')
    .describe(
      'Interface the API, the simulator and the effect sink listen on; loopback by default, 0.0.0.0: every interface (as in a container).',
    ),
  DATABASE_URL: optionalString.describe(
    'PostgreSQL URL of the shared stores (effects, call intents, tenants, keys, idempotency, events); empty: SQLite files in DATA_DIR.',
  ),
  EFFECT_SINK_URL: optionalString.describe(
    'Base URL of an effect sink that counts deliveries (`npm run cluster` runs one); empty: none.',
  ),
  SINK_PORT: int(3003).describe('Port of the effect sink (`npm run start:sink`).'),
  METRICS_PORT: optionalInt(0, 65535).describe(
    'Port of a metrics-only listener (GET /metrics without auth); empty: none, and /metrics on PORT needs the admin token.',
  ),
  METRICS_HOST: z
    .string()
    .default('127.0.0.1')
    .describe(
      'Address the metrics listener binds to; loopback by default, so only this host (or a sidecar) can scrape.',
    ),
  HTTP_HEADERS_TIMEOUT_MS: int(15_000).describe(
    'A client must send its request headers within this many ms (slow clients are cut off with 408).',
  ),
  HTTP_REQUEST_TIMEOUT_MS: int(60_000).describe(
    'A client must send its whole request (headers and body) within this many ms.',
  ),
  HTTP_MAX_CONNECTIONS: int(1000).describe('Most connections the API holds at once.'),
  SCHEDULER_ANSWER_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(30)
    .describe(
      "How long the API waits for the scheduler's answer to a submission, a tenant's settings, a drain or a resume (the scheduler answers only while a worker runs) before it answers 503 unavailable with a Retry-After.",
    ),
  IDEMPOTENCY_PENDING_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(120)
    .describe(
      "A submission's idempotency claim still pending after this many seconds belongs to a request that died: until then a retry with its key answers 409, after it the retry takes the claim over under the same run id. At least SCHEDULER_ANSWER_SECONDS (30 unless set), the API's wait for the scheduler's answer.",
    ),
  SCHEDULE_MIN_INTERVAL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(60)
    .describe(
      "The shortest interval a schedule may fire at (`intervalSeconds`); below 60, a cron expression may also carry a seconds field. Every firing starts a workflow, so a tenant's one-second schedule is a steady load on the Temporal server.",
    ),
  ADMIN_TOKEN: optionalString
    .refine(
      (v) => v === undefined || v.length >= MIN_ADMIN_TOKEN_LENGTH,
      `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. \`openssl rand -hex 24\`), or empty to generate one`,
    )
    .describe(
      `Bearer token for /v1/admin/*, /metrics and the operator view (at least ${MIN_ADMIN_TOKEN_LENGTH} characters); empty: the one generated on the first start, kept in DATA_DIR/admin-token.`,
    ),
  ADMIN_TOKEN_NEXT: optionalString
    .refine(
      (v) => v === undefined || v.length >= MIN_ADMIN_TOKEN_LENGTH,
      `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters, or empty`,
    )
    .describe(
      'A second admin token accepted beside ADMIN_TOKEN, to rotate it without downtime: set the new one here, move clients, then make it ADMIN_TOKEN; empty: none.',
    ),
};

const temporal = {
  TEMPORAL_ADDRESS: optionalString.describe(
    'host:port of the Temporal frontend; empty: start the embedded dev server (`temporal server start-dev`).',
  ),
  TEMPORAL_NAMESPACE: z.string().default('default').describe('Temporal namespace for every workflow.'),
  TEMPORAL_PORT: int(7233).describe(
    'gRPC port of the embedded dev server (used only when TEMPORAL_ADDRESS is empty).',
  ),
  TEMPORAL_UI_PORT: int(8233).describe(
    'Web UI port of the embedded dev server (used only when TEMPORAL_ADDRESS is empty).',
  ),
  TEMPORAL_UI_URL: optionalString.describe(
    "Base URL of the Temporal Web UI the console links each run to; empty: the embedded dev server's (http://localhost:TEMPORAL_UI_PORT), or no link with TEMPORAL_ADDRESS set.",
  ),
  TEMPORAL_CLI_PATH: optionalString.describe(
    'Path to the `temporal` CLI for the embedded dev server; empty: found on PATH or installed into .tools/.',
  ),
  TASK_QUEUE: z
    .string()
    .default('fairway')
    .describe('Task queue that the worker polls and that workflows are started on.'),
  DATA_DIR: z
    .string()
    .default('./data')
    .describe(
      'SQLite files live here: the embedded dev server, the effect store, call intents, batch items and the API store.',
    ),
  SCHEDULER_WORKFLOW_ID: z
    .string()
    .default('scheduler')
    .describe('Workflow id of the long-lived scheduler workflow.'),
  SCHEDULER_MAX_HISTORY_EVENTS: z.coerce
    .number()
    .int()
    .min(10)
    .max(40_000)
    .default(1000)
    .describe(
      'The scheduler continues as new after this many history events (sooner if the server suggests it). ' +
        'A short history keeps a replay short: a worker taking the scheduler over replays at most this many events. ' +
        'A running chain keeps its own value.',
    ),
};

const model = {
  MODEL_BASE_URL: optionalString.describe(
    'Base URL of an OpenAI-compatible model API; empty: start the embedded simulator on SIM_PORT.',
  ),
  MODEL_API_KEY: optionalString.describe('API key sent to the model plane as a bearer token; empty: none.'),
  MODEL_NAME: z.string().default('sim-1').describe('Model name sent in chat-completion requests.'),
  MODEL_TPM: int(2_000_000).describe('Simulator quota: tokens per minute.'),
  MODEL_RPM: int(60_000).describe('Simulator quota: requests per minute.'),
  SIM_PORT: int(3001).describe('HTTP port of the model-plane simulator (`npm run start:sim`).'),
  SIM_ADMIN_TOKEN: optionalString.describe(
    "Bearer token that lets peers other than loopback use the simulator's /admin/* and the effect sink's /summary; empty: loopback peers only.",
  ),
  SIM_SEED: int(42).describe("Seed of the simulator's pseudo-random choices (token counts, latencies)."),
  SIM_HEADER_DIALECT: z
    .enum(['openai', 'anthropic'])
    .default('openai')
    .describe(
      'Rate-limit headers the simulator sends: openai (x-ratelimit-*) or anthropic (anthropic-ratelimit-*).',
    ),
  SIM_WINDOW: z
    .enum(['rolling', 'calendar'])
    .default('rolling')
    .describe(
      "How the simulator's quotas count: rolling (a continuously refilling bucket) or calendar (the whole allowance back at each minute of the clock).",
    ),
  SIM_HOLD_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(0)
    .describe(
      'The simulator holds a call over its quota up to this many ms (as a gateway with retries does) before answering it or, when the hold runs out, 429; 0: refused at once.',
    ),
  MODEL_CALL_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(MIN_MODEL_CALL_TIMEOUT_SECONDS)
    .max(MAX_MODEL_CALL_TIMEOUT_SECONDS)
    .default(DEFAULT_MODEL_CALL_TIMEOUT_SECONDS)
    .describe(
      `The longest one model call may take, in seconds (${MIN_MODEL_CALL_TIMEOUT_SECONDS} to ${MAX_MODEL_CALL_TIMEOUT_SECONDS}): the start-to-close timeout of a short step and of an agent's \`ctx.model\` call. The HTTP client gives up a tenth sooner (at most 5 s sooner) with a retryable failure; a call cut so may have been served, so it is charged its worst case. Keep it above the longest hold your provider or gateway documents (a gateway that queues calls over the limit holds them about 60 s, then answers 200). The default is the OpenAI and Anthropic SDKs' own request timeout, which long completions need. A run keeps the value it started with.`,
    ),
  MODEL_MAX_PAUSE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(G.maxPauseMs / 1000)
    .describe(
      'The longest one Retry-After (or reset) may pause the fleet or hold a step, in seconds (1 to 3600).',
    ),
  MODEL_BREAKER_PROBE_MIN_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(600)
    .default(BREAKER_DEFAULTS.probeMinMs / 1000)
    .describe(
      'When the provider refuses the API key (401, 403, a key-level quota) or answers every call 5xx, admission pauses; after this many seconds one unit goes through as a probe (1 to 600). Refused steps retry after the same wait.',
    ),
  MODEL_BREAKER_PROBE_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(BREAKER_DEFAULTS.probeMaxMs / 1000)
    .describe(
      "Each failed probe doubles the breaker's wait up to this many seconds (1 to 3600; at least the minimum); a step refused for its key waits at most as long. Keep it below the lease TTL.",
    ),
  MODEL_QUOTA_SHARE: z.coerce
    .number()
    .gt(0)
    .max(1)
    .default(G.quotaShare)
    .describe(
      "Fairway aims at most at this share of the account's advertised token quota, leaving the rest to other consumers of the same account (0 to 1).",
    ),
};

/** One entry of `MODELS`. */
const ModelEntrySchema = z.strictObject({
  dialect: z.enum(['openai', 'anthropic']),
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** The environment variable holding the key (the key itself stays out of the JSON). */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  apiKey: z.string().min(1).optional(),
  /** The model's name at the provider; default: the entry's name. */
  model: z.string().min(1).optional(),
  /** The model pool its calls are paced in (a provider's limit); default: the default pool. */
  pool: z
    .string()
    .regex(POOL_NAME_PATTERN, 'a pool name is 1 to 64 letters, digits, ".", "_", ":" or "-"')
    .optional(),
  /** The share of its pool's advertised quota Fairway aims at (0 to 1); default: MODEL_QUOTA_SHARE. */
  quotaShare: z.number().gt(0).max(1).optional(),
});

/** Both dialects on the embedded simulator: what the quick start and the tests call. */
export const DEFAULT_MODELS = { 'sim-gpt': { dialect: 'openai' }, 'sim-claude': { dialect: 'anthropic' } };

const models = {
  MODELS: z
    .string()
    .default(JSON.stringify(DEFAULT_MODELS))
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string().min(1), ModelEntrySchema))
    .describe(
      'Models agents may call (`ctx.model`), as JSON: name -> {dialect: openai|anthropic, baseUrl?, apiKeyEnv? (the variable holding its key), apiKey?, model? (its name at the provider), pool? (the model pool whose governor paces its calls and admits the runs of agents declaring it; default: the default pool, which MODEL_DEFAULT and steps use), quotaShare? (the share of the advertised quota of its pool to aim at; default MODEL_QUOTA_SHARE; the models of one pool state the same)}; without baseUrl: MODEL_BASE_URL, else the embedded simulator.',
    ),
  MODEL_DEFAULT: z
    .string()
    .default('sim-gpt')
    .describe('The model of a call that names none (one of MODELS).'),
  PAYLOAD_CLAIM_CHECK_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(128 * 1024)
    .describe(
      'Temporal payloads larger than this many bytes (long conversations, completions) are kept in the payload store (DATABASE_URL, else DATA_DIR/payloads.db) and only a reference goes into workflow history.',
    ),
  PAYLOAD_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3650)
    .default(90)
    .describe(
      "Payloads in the payload store neither written nor read for this many days are deleted (the API sweeps hourly; 0: never). A workflow reads its payloads when it is replayed and the API when it reads a run; the scheduler's current history is kept. Keep it above the Temporal namespace's retention and the longest a run stays open (gates wait up to GATE_TIMEOUT_SECONDS), or a late replay finds a payload gone.",
    ),
};

const policy = {
  FLEET_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_CONCURRENCY)
    .default(FLEET.concurrency)
    .describe(
      `Starting fleet-wide limit of units admitted and running at once (1 to ${MAX_CONCURRENCY}: the scheduler's state is sized for it; live: \`PATCH /v1/admin/scheduler\`).`,
    ),
  FLOOR_STANDARD: z.coerce
    .number()
    .min(0)
    .max(0.5)
    .default(FLEET.floors.standard)
    .describe('Share of admissions guaranteed to the standard lane while it has backlog (0 to 0.5).'),
  FLOOR_BATCH: z.coerce
    .number()
    .min(0)
    .max(0.5)
    .default(FLEET.floors.batch)
    .describe('Share of admissions guaranteed to the batch lane while it has backlog (0 to 0.5).'),
  FLEET_INTERACTIVE_RESERVE: z.coerce
    .number()
    .min(0)
    .max(0.5)
    .default(DEFAULT_INTERACTIVE_RESERVE)
    .describe(
      "Share of the fleet's slots (rounded up, never all) kept free for interactive runs: standard and batch work may not take them, so an interactive run is admitted at once (0 to 0.5; 0 turns it off).",
    ),
  MAX_WAIT_INTERACTIVE_SECONDS: waitSeconds().describe(
    "The longest a new interactive unit may expect to wait (its tenant's interactive backlog at the tenant's admission rate, bounded by the governor's rate now, plus a pause): a longer expected wait is answered 429 wait_too_long with the time until it fits as Retry-After (0: no bound). Changes live with PATCH /v1/admin/scheduler.",
  ),
  MAX_WAIT_STANDARD_SECONDS: waitSeconds().describe('The same bound for standard units (0: no bound).'),
  MAX_WAIT_BATCH_SECONDS: waitSeconds().describe('The same bound for batch units (0: no bound).'),
  LEASE_TTL_SECONDS: int(FLEET.leaseTtlSeconds).describe(
    "Seconds an admitted unit's slot lease lasts without renewal before the slot is reclaimed.",
  ),
  GLOBAL_MAX_QUEUED: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_GLOBAL_QUEUED)
    .default(FLEET.globalMaxQueued)
    .describe(
      `Fleet-wide backlog cap (at most ${MAX_GLOBAL_QUEUED}); submissions beyond it are shed with 429. Retries of runs that lost their lease may use 10% more, no further.`,
    ),
  DEFAULT_TENANT_MAX_QUEUED: int(TENANT.maxQueued).describe(
    'Default per-tenant backlog cap (queued units) before its submissions are shed with 429.',
  ),
  DEFAULT_TENANT_MAX_IN_FLIGHT: int(TENANT.maxInFlight).describe(
    'Default per-tenant cap on units in flight at once.',
  ),
  TENANT_RATE_PER_SECOND: int(200).describe(
    'Default per-tenant submission rate limit at the API (units per second, token bucket with a burst of twice this; a batch costs one per item; 0: no limit).',
  ),
  TENANT_REQUEST_RATE_PER_SECOND: int(300).describe(
    'Default per-tenant request rate at the API: every tenant request costs one, submissions and resends included, before anything is looked up (a batch resume costs one per item).',
  ),
  TRIGGERS_MAX_PER_TENANT: int(DEFAULT_EVENT_CAPS.maxTriggers).describe(
    'Triggers one tenant may hold; one more is refused with 409.',
  ),
  WEBHOOK_SECRETS_MAX_PER_TENANT: int(DEFAULT_EVENT_CAPS.maxWebhookSecrets).describe(
    'Webhook secrets (one per source) one tenant may hold; one more is refused with 409.',
  ),
  TRIGGER_INPUT_MAX_BYTES: int(DEFAULT_EVENT_CAPS.maxTriggerInputBytes).describe(
    'The largest trigger `input` template in bytes of compact JSON; larger is refused with 413.',
  ),
  RUN_MAX_TOKENS: int(DEFAULT_RUN_CAPS.maxTokens).describe(
    'Per-run cap on tokens: a run declaring or estimated at more is refused with 400.',
  ),
  RUN_MAX_WALL_SECONDS: int(DEFAULT_RUN_CAPS.maxWallSeconds).describe(
    "Per-run cap on planned wall time in seconds (e.g. the synthetic agent's steps x stepMs); more is refused with 400.",
  ),
  SUBMIT_COALESCE_MS: int(15).describe(
    'The API coalesces submissions for this many ms into one batched message to the scheduler.',
  ),
  MAILBOX_FLUSH_MS: int(100).describe(
    'Interval (ms) at which each worker flushes its mailbox (releases, renewals, charges, model observations) into one report to the scheduler.',
  ),
  REPORTS: z
    .enum(['update', 'pull'])
    .default('pull')
    .describe(
      "How a worker's reports (releases, charges, renewals, model observations) reach the scheduler: `pull` appends each to the report log in the call intents' store (DATABASE_URL, else DATA_DIR/call-intents.db) and the scheduler pulls them with one activity at a time, whatever the number of workers (no update per worker; a release is done once it is durable there); `update` sends each worker's report as a `workerReport` update, each holding one of the workers' WORKER_UPDATE_PERMITS (Temporal takes 10 updates in flight per workflow), so past a few workers reports queue and releases land late. The scheduler pulls the log either way, so workers may change path one by one.",
    ),
  REPORT_PULL_WAIT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(10_000)
    .default(1000)
    .describe(
      "How long the scheduler's pull of the report log waits for a first report before it answers empty (ms). A report is pulled within about 20 ms of being logged while the pull waits; an idle scheduler pays one activity per wait, and continue-as-new waits for the pull in flight.",
    ),
  WORKER_UPDATE_PERMITS: z.coerce
    .number()
    .int()
    .min(1)
    .max(9)
    .default(4)
    .describe(
      "How many scheduler updates every worker together may have in flight at once (resubmits, top-ups, the offer batcher's and scheduled runs' submits, tenant re-syncs): each holds one of this many permits, leased in the call intents' store (DATABASE_URL, else DATA_DIR/call-intents.db), while it is on its way. Temporal takes 10 updates in flight per workflow (`history.maxInFlightUpdates`); the default 4 leaves 6 to the API processes' submit coalescers (2 each) and the operator's updates. Set the same value on every worker.",
    ),
  WORKER_UPDATE_PERMIT_TTL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(120_000)
    .default(15_000)
    .describe(
      "The lease of a worker's update permit (ms), renewed every third of it while its update is on its way: a worker killed holding one frees it this long after its last renewal. Keep it well above the clock skew between worker hosts.",
    ),
  WORKFLOW_BUNDLE_PATH: optionalString.describe(
    "A prebuilt workflow bundle (bundleWorkflowCode's output, from this same code) for the worker to load instead of bundling src/workflows when it starts (about 5 s of CPU). Empty: bundled at start.",
  ),
  CHARGE_OWNER_DEAD_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(30)
    .describe(
      'Every model call is recorded (DATABASE_URL, else DATA_DIR/call-intents.db) before it goes; a worker not seen for this many seconds is dead, and another worker charges its calls whose charge it never sent.',
    ),
  CHARGE_SWEEP_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(10)
    .describe('How often (seconds) each worker sweeps for the uncharged calls of dead workers.'),
  CHARGE_KEEP_SETTLED_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(3600)
    .describe("How long (seconds) a call's record is kept after its charge reached the scheduler."),
  CHARGE_USAGE_LOOKUP: z
    .enum(['auto', 'none', 'openai-stored'])
    .default('auto')
    .describe(
      "How a call of unknown outcome (cut mid-flight, dropped), charged its worst case provisionally, is settled against the provider's bill: openai-stored (calls go with store: true and their call id in metadata; `GET /v1/chat/completions?metadata[fairway_call]=` answers each one's usage), none (the worst case stands), auto (openai-stored when every model is the embedded simulator, else none). openai-stored with a model whose baseUrl is not MODEL_BASE_URL is refused at start. See docs/operating.md.",
    ),
  CHARGE_USAGE_URL: optionalString.describe(
    'Base URL of the usage lookup (CHARGE_USAGE_LOOKUP); empty: MODEL_BASE_URL, else the embedded simulator. Its key: MODEL_API_KEY.',
  ),
  CHARGE_RECONCILE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(10)
    .describe('How often (seconds) each worker looks up its provisional charges at the provider.'),
  CHARGE_RECONCILE_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(120)
    .describe(
      'How long (seconds) after its call a provisional charge waits before it is looked up: longer than the provider may still serve a call its caller gave up on (a held request).',
    ),
  CHARGE_RECONCILE_TAKEN_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(600)
    .describe(
      'How long (seconds) after its call a provisional charge taken over from a worker taken for dead waits before a lookup that finds the call unserved refunds it: longer than such a worker may stall and then still send the call. Until then the worst case stands (over, never under), so spent + reserved stays within the budget; a call found served is settled at once.',
    ),
  RUN_REOFFER_FIRST_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(300)
    .describe(
      'A queued run not admitted after this many seconds (spread up to 2x) checks that the scheduler knows it and re-offers itself if not: a safety net, since the watchdog tells queued runs to re-offer at once after a scheduler loss. While still queued it checks again, backing off x2 up to RUN_REOFFER_MAX_SECONDS.',
    ),
  RUN_START_ORDER: z
    .enum(['start-first', 'decide-first'])
    .default('decide-first')
    .describe(
      "How the API offers a new run: `decide-first` submits first and starts a run the scheduler admits at once with its admission (one workflow task, no admit signal, no re-offer timer), a run that must queue the start-first way; `start-first` starts every run's workflow, then submits it (the run waits for the admission's signal). Upgrading workers from a version without decide-first: drain first, or run `start-first` until every worker runs this version.",
    ),
  RUN_QUEUED_START: z
    .enum(['delayed', 'started'])
    .default('delayed')
    .describe(
      "How the API starts a new run the scheduler could not admit at once (decide-first): `delayed` starts its workflow with a start delay of RUN_REOFFER_FIRST_SECONDS (spread up to 2x) that its admission's notice ends (a signal-with-start), so a queued run costs no workflow task and no timer until it is admitted; `started` starts it at once to wait for the notice. Upgrading from a version without it: deploy the workers first (their notices end the delay), or set `started` until every worker runs this version.",
    ),
  RUN_REOFFER_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(1800)
    .describe(
      "The longest wait between a queued run's checks that the scheduler knows it (at least RUN_REOFFER_FIRST_SECONDS).",
    ),
  SCHEDULER_WATCHDOG_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(5)
    .describe(
      'The API and the worker check this often that the scheduler workflow runs, and start it when not.',
    ),
};

const governor = {
  GOVERNOR_INITIAL_TPM: int(G.initialTokensPerMinute).describe(
    'Admitted tokens per minute before the model plane has reported anything.',
  ),
  GOVERNOR_MIN_TPM: int(G.minTokensPerMinute).describe(
    'Floor of the admitted tokens per minute, however hard the provider throttles.',
  ),
  GOVERNOR_MAX_TPM: int(G.maxTokensPerMinute).describe('Ceiling of the admitted tokens per minute.'),
  GOVERNOR_DECREASE: share(G.decrease).describe(
    'Multiplicative decrease of the limits on throttling (0 to 1; 0.7 cuts by 30%).',
  ),
  GOVERNOR_COOLDOWN_MS: int(G.decreaseCooldownMs).describe(
    "After a throttle's cut, further throttles within this many ms do not cut again (a gentle slowdown before the wall does not hold one back; it waits as long after any decrease); increases wait as long after a throttle.",
  ),
  GOVERNOR_INCREASE_TPM: int(G.increaseTokensPerMinute).describe(
    'Additive increase of admitted tokens per minute per second of healthy calls, at least (see GOVERNOR_INCREASE_QUOTA_SHARE).',
  ),
  GOVERNOR_INCREASE_QUOTA_SHARE: share(G.increaseQuotaShare).describe(
    "The same increase as a share of the provider's quota, advertised or else served (the larger applies).",
  ),
  GOVERNOR_INCREASE_CONCURRENCY: z.coerce
    .number()
    .nonnegative()
    .default(G.increaseConcurrency)
    .describe("Additive increase of the governor's concurrency limit, per second of healthy calls."),
  GOVERNOR_MIN_SPEND_FACTOR: z.coerce
    .number()
    .min(0.01)
    .max(1)
    .default(0.1)
    .describe(
      'Admission paces on what completed units spent per reserved token, down to this share (0.01 to 1; 1: always on the estimates). Budgets still reserve the estimates.',
    ),
  GOVERNOR_PROBE_FACTOR: z.coerce
    .number()
    .min(0)
    .default(PROBE_DEFAULTS.probeFactor)
    .describe(
      'While the provider states no rate limit in its headers, admit at most this multiple of the tokens served over the last 30 s, starting from GOVERNOR_MIN_TPM; a 429 then leaves a soft ceiling at 80% of what was served, growing 0.1% a second (1 or less: off, start at GOVERNOR_INITIAL_TPM and learn only from 429s).',
    ),
  GOVERNOR_LOW_WATER: share(G.remainingLowWater).describe(
    "Below this share of the provider's remaining tokens (or requests), stop increasing; cut gently if spending (or calling) outpaces the quota (0 to 1).",
  ),
  GOVERNOR_LATENCY_FACTOR: z.coerce
    .number()
    .min(0)
    .default(0)
    .describe(
      `Served calls slower than this multiple of their baseline, per call and per token, for GOVERNOR_LATENCY_SUSTAIN_SECONDS mean a provider or gateway queueing calls: the governor slows admission before any 429 (1 or less: off, the default until it is measured on the overload bench; ${LATENCY_DEFAULTS.latencyFactor} is a starting point).`,
    ),
  GOVERNOR_LATENCY_SUSTAIN_SECONDS: z.coerce
    .number()
    .min(0)
    .default(LATENCY_DEFAULTS.latencySustainMs / 1000)
    .describe('How long latency stays above GOVERNOR_LATENCY_FACTOR × its baseline before admission slows.'),
  GOVERNOR_LATENCY_DECREASE: share(LATENCY_DEFAULTS.latencyDecrease).describe(
    'Multiplicative decrease of admitted tokens per minute per cooldown while calls queue (0 to 1; 0.9 cuts by 10%).',
  ),
};

const agents = {
  AGENTS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((m) => m.trim())
        .filter((m) => m.length > 0),
    )
    .describe(
      'Your agents: comma-separated paths of modules exporting defineAgent() values (relative to the working directory). The API reads their schemas and estimates; a worker started with them serves them. Empty: the built-in agents only.',
    ),
};

const gates = {
  GATE_TIMEOUT_SECONDS: optionalInt(1, 30 * 24 * 3600).describe(
    "The built-in agents' gate timeout in seconds (their outcome on timeout stays as declared: triage escalates), and the timeout (rejecting) of a gate whose agent and call declare none; a user agent's own declared gate wins. Empty: each agent's own (triage: 86400).",
  ),
  EFFECT_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(DEFAULT_EFFECT_MAX_ATTEMPTS)
    .describe(
      "A user's effect function (`ctx.effect`) is attempted at most this many times, whether it threw, timed out or its worker died (backoff from 1 s, doubling, at most 1 minute apart: the default gives about 15 minutes); then its run fails with `effect_failed` naming the last error. A delivered effect is never attempted again. A run keeps the value it started with.",
    ),
  EFFECT_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(5)
    .max(24 * 3600)
    .default(DEFAULT_EFFECT_TIMEOUT_SECONDS)
    .describe(
      "How long one attempt of a user's effect function may take: at this deadline its `ctx.signal` aborts and its hold on the effect is no longer renewed, and the next attempt acts only once it returned or its hold lapsed (30 s later), never beside it. A run keeps the value it started with.",
    ),
};

const tools = {
  TOOL_LOOKUP_CREDENTIAL: optionalString.describe(
    'Credential of the `lookup` tool; empty: a worker serving it makes up a random one (the sink cannot verify it).',
  ),
  TOOL_PAGER_CREDENTIAL: optionalString.describe(
    'Credential of the `pager` tool (its effects reach the effect sink, which checks it).',
  ),
  TOOL_SCANNER_CREDENTIAL: optionalString.describe('Credential of the `scanner` tool.'),
  TOOL_IDENTITY_SALT: optionalString.describe(
    'Salt of the tool identities runs show (`tool:<name>#<HMAC of the credential>`); set the same on every worker host. Empty: one generated on the first start, kept in DATA_DIR/tool-identity-salt.',
  ),
  WORKER_TOOLS: z
    .string()
    .default(TOOL_NAMES.join(','))
    .transform((v) =>
      v
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    )
    .pipe(z.array(z.enum(TOOL_NAMES)))
    .describe(
      "Tools this process's worker serves, comma-separated (each on its own task queue `<TASK_QUEUE>.tool.<name>`); empty: none (docker-compose: the fleet workers serve none, and `npm run start:tools` runs one tool worker per tool).",
    ),
};

const tracing = {
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString
    .refine((v) => v === undefined || /^https?:\/\/[^/]/.test(v), 'an http(s) URL')
    .describe(
      "OpenTelemetry collector's OTLP/HTTP base URL (traces go to `<url>/v1/traces`, as JSON), e.g. http://localhost:4318. Empty: tracing off (no spans, no interceptors, no exporter).",
    ),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .default('fairway')
    .describe(
      "The traces' `service.name` resource attribute (name each process: fairway-api, fairway-worker).",
    ),
};

const webhooks = {
  WEBHOOK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(10_000)
    .describe(
      'A webhook delivery attempt gets this many ms in all (connect, send, answer); a receiver that has not answered by then has failed the attempt, which is retried.',
    ),
  WEBHOOK_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(50)
    .default(DEFAULT_RETRY.maxAttempts)
    .describe('Attempts per webhook delivery, the first included; after the last failed one it is `failed`.'),
  WEBHOOK_RETRY_BASE_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(DEFAULT_RETRY.baseMs)
    .describe(
      'The wait (ms) after a failed webhook attempt; each further failure doubles it, up to WEBHOOK_RETRY_MAX_MS.',
    ),
  WEBHOOK_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(DEFAULT_RETRY.maxMs)
    .describe("The longest wait (ms) between two webhook attempts, a receiver's Retry-After included."),
  WEBHOOK_POLL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(2_000)
    .describe(
      'How often (ms) the API reads Temporal visibility for new run events, and looks for due webhook deliveries.',
    ),
  WEBHOOK_SCAN_OVERLAP_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(60_000)
    .describe(
      "How far (ms) each scan of closed runs reaches back before the previous one began: covers visibility's lag and clock skew (an event seen twice is recorded once).",
    ),
  WEBHOOK_TARGETS: z
    .enum(['public', 'any'])
    .default('public')
    .describe(
      'Where webhooks may be delivered: `public` refuses loopback, private, link-local (cloud metadata) and CGNAT addresses, checked on the address connected to; `any` allows them (a receiver on this host or network).',
    ),
  WEBHOOKS_MAX_PER_TENANT: int(DEFAULT_EVENT_CAPS.maxWebhookEndpoints).describe(
    'Webhook endpoints one tenant may register; one more is refused with 409.',
  ),
};

const processEnv = {
  BUILD_ID: z
    .string()
    .default('fairway-dev')
    .describe('Build id of this worker; restarting a worker with another BUILD_ID rehearses a deploy.'),
  SHUTDOWN_GRACE_SECONDS: int(120).describe(
    'On SIGTERM the worker waits up to this many seconds for in-flight activities to finish.',
  ),
  SHUTDOWN_FORCE_SECONDS: int(30).describe(
    'Then it cancels them and waits this many more seconds; a step that ignores cancellation no longer holds the process: the worker stops anyway (its attempt is retried elsewhere after its timeout).',
  ),
  LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
    .default('info')
    .describe('Log level: trace, debug, info, warn, error, fatal or silent.'),
};

/** The variables by section, in the order the reference and `.env.example` list them. */
export const ENV_SECTIONS: readonly { title: string; vars: Record<string, z.ZodType> }[] = [
  { title: 'API', vars: api },
  { title: 'Temporal', vars: temporal },
  { title: 'Model plane', vars: model },
  { title: "Agents' models and payloads", vars: models },
  { title: 'Scheduling policy', vars: policy },
  {
    title: 'Token governor (read when the scheduler chain is first started; a running chain keeps its own)',
    vars: governor,
  },
  { title: 'Your agents', vars: agents },
  { title: 'Human gates', vars: gates },
  {
    title:
      'Tool identities (each credential is held only by a worker serving the tool, and by the effect sink)',
    vars: tools,
  },
  { title: 'Traces (OpenTelemetry, docs/operating.md#traces)', vars: tracing },
  { title: 'Webhooks out', vars: webhooks },
  { title: 'Process', vars: processEnv },
];

/** Every environment variable Fairway reads. */
export const EnvSchema = z.object({
  ...api,
  ...temporal,
  ...model,
  ...models,
  ...policy,
  ...governor,
  ...agents,
  ...gates,
  ...tools,
  ...tracing,
  ...webhooks,
  ...processEnv,
});

export type Env = z.infer<typeof EnvSchema>;

/** The typed configuration: the parsed environment in the shape the code uses. */
export type Config = ReturnType<typeof toConfig>;

/** A model agents may call, resolved: its key read from the variable `apiKeyEnv` names. */
export interface ModelConfig {
  name: string;
  dialect: ModelDialect;
  /** undefined: MODEL_BASE_URL, else the embedded simulator. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  providerModel: string | undefined;
  /** The model pool its calls are paced in; undefined: the default pool. */
  pool: string | undefined;
}

/** Named pools' own quota shares, from the models that state one (absent when none does). */
function poolQuotaShares(models: Env['MODELS']): Pick<GovernorParams, 'poolQuotaShares'> {
  const shares: Record<string, number> = {};
  for (const m of Object.values(models))
    if (m.pool !== undefined && m.quotaShare !== undefined) shares[m.pool] = m.quotaShare;
  return Object.keys(shares).length > 0 ? { poolQuotaShares: shares } : {};
}

function toConfig(e: Env, env: Record<string, string | undefined> = {}) {
  const fleet: FleetSettings = {
    concurrency: e.FLEET_CONCURRENCY,
    floors: { standard: e.FLOOR_STANDARD, batch: e.FLOOR_BATCH },
    leaseTtlSeconds: e.LEASE_TTL_SECONDS,
    globalMaxQueued: e.GLOBAL_MAX_QUEUED,
    interactiveReserve: e.FLEET_INTERACTIVE_RESERVE,
    ...waitBounds(undefined, {
      interactive: e.MAX_WAIT_INTERACTIVE_SECONDS,
      standard: e.MAX_WAIT_STANDARD_SECONDS,
      batch: e.MAX_WAIT_BATCH_SECONDS,
    }),
  };
  const tenantDefaults: TenantDefaults = {
    maxQueued: e.DEFAULT_TENANT_MAX_QUEUED,
    maxInFlight: e.DEFAULT_TENANT_MAX_IN_FLIGHT,
    ratePerSecond: e.TENANT_RATE_PER_SECOND,
    requestRatePerSecond: e.TENANT_REQUEST_RATE_PER_SECOND,
  };
  const runCaps: RunCaps = { maxTokens: e.RUN_MAX_TOKENS, maxWallSeconds: e.RUN_MAX_WALL_SECONDS };
  const eventCaps: EventCaps = {
    maxTriggers: e.TRIGGERS_MAX_PER_TENANT,
    maxWebhookSecrets: e.WEBHOOK_SECRETS_MAX_PER_TENANT,
    maxTriggerInputBytes: e.TRIGGER_INPUT_MAX_BYTES,
    maxWebhookEndpoints: e.WEBHOOKS_MAX_PER_TENANT,
  };
  const keyRetry = {
    minMs: e.MODEL_BREAKER_PROBE_MIN_SECONDS * 1000,
    maxMs: Math.max(e.MODEL_BREAKER_PROBE_MIN_SECONDS, e.MODEL_BREAKER_PROBE_MAX_SECONDS) * 1000,
  };
  /** The token governor's parameters (a new scheduler chain starts with them). */
  const governor: GovernorParams = {
    ...DEFAULT_GOVERNOR,
    initialTokensPerMinute: e.GOVERNOR_INITIAL_TPM,
    minTokensPerMinute: e.GOVERNOR_MIN_TPM,
    maxTokensPerMinute: e.GOVERNOR_MAX_TPM,
    quotaShare: e.MODEL_QUOTA_SHARE,
    ...poolQuotaShares(e.MODELS),
    maxPauseMs: e.MODEL_MAX_PAUSE_SECONDS * 1000,
    decrease: e.GOVERNOR_DECREASE,
    decreaseCooldownMs: e.GOVERNOR_COOLDOWN_MS,
    increaseTokensPerMinute: e.GOVERNOR_INCREASE_TPM,
    increaseQuotaShare: e.GOVERNOR_INCREASE_QUOTA_SHARE,
    increaseConcurrency: e.GOVERNOR_INCREASE_CONCURRENCY,
    remainingLowWater: e.GOVERNOR_LOW_WATER,
    minSpendFactor: e.GOVERNOR_MIN_SPEND_FACTOR,
    ...(e.GOVERNOR_PROBE_FACTOR > 1 ? { ...PROBE_DEFAULTS, probeFactor: e.GOVERNOR_PROBE_FACTOR } : {}),
    breakerProbeMinMs: keyRetry.minMs,
    breakerProbeMaxMs: keyRetry.maxMs,
    ...(e.GOVERNOR_LATENCY_FACTOR > 1
      ? {
          latencyFactor: e.GOVERNOR_LATENCY_FACTOR,
          latencySustainMs: e.GOVERNOR_LATENCY_SUSTAIN_SECONDS * 1000,
          latencyDecrease: e.GOVERNOR_LATENCY_DECREASE,
        }
      : {}),
  };
  const credentials: Partial<Record<ToolName, string>> = {};
  if (e.TOOL_LOOKUP_CREDENTIAL !== undefined) credentials.lookup = e.TOOL_LOOKUP_CREDENTIAL;
  if (e.TOOL_PAGER_CREDENTIAL !== undefined) credentials.pager = e.TOOL_PAGER_CREDENTIAL;
  if (e.TOOL_SCANNER_CREDENTIAL !== undefined) credentials.scanner = e.TOOL_SCANNER_CREDENTIAL;
  return {
    port: e.PORT,
    host: e.HOST,
    /** undefined: SQLite files under dataDir; set: the shared stores live in this PostgreSQL database. */
    databaseUrl: e.DATABASE_URL,
    /** undefined: no external effect sink; set: the effect step also delivers each effect there. */
    effectSinkUrl: e.EFFECT_SINK_URL,
    sinkPort: e.SINK_PORT,
    /** A loopback-only listener serving GET /metrics without auth; port undefined: metrics only on the API, admin token required. */
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    /** A pending idempotency claim older than this (ms) is stale: a retry with its key takes it over. */
    pendingClaimTtlMs: e.IDEMPOTENCY_PENDING_TTL_SECONDS * 1000,
    /** How long the API waits for the scheduler's answer to an update before it answers 503 (ms). */
    schedulerAnswerMs: e.SCHEDULER_ANSWER_SECONDS * 1000,
    /** The shortest interval (seconds) a schedule may fire at. */
    scheduleMinIntervalSeconds: e.SCHEDULE_MIN_INTERVAL_SECONDS,
    adminToken: e.ADMIN_TOKEN,
    /** A second admin token accepted during a rotation. */
    adminTokenNext: e.ADMIN_TOKEN_NEXT,
    temporal: {
      /** undefined: start the embedded dev server. */
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      /** undefined: the embedded dev server's UI, or none. */
      uiUrl: e.TEMPORAL_UI_URL,
      cliPath: e.TEMPORAL_CLI_PATH,
      taskQueue: e.TASK_QUEUE,
    },
    dataDir: e.DATA_DIR,
    schedulerWorkflowId: e.SCHEDULER_WORKFLOW_ID,
    schedulerMaxHistoryEvents: e.SCHEDULER_MAX_HISTORY_EVENTS,
    model: {
      /** undefined: start the embedded simulator. */
      baseUrl: e.MODEL_BASE_URL,
      apiKey: e.MODEL_API_KEY,
      name: e.MODEL_NAME,
      /** The longest one Retry-After may hold a step or pause the fleet, ms. */
      maxPauseMs: e.MODEL_MAX_PAUSE_SECONDS * 1000,
      /** The waits of a call refused for its key: the key breaker's backoffs, ms. */
      keyRetry,
    },
    /** The models agents call, by name, and the one a call naming none gets. */
    models: {
      default: e.MODEL_DEFAULT,
      endpoints: Object.entries(e.MODELS).map(([name, m]): ModelConfig => ({
        name,
        dialect: m.dialect,
        baseUrl: m.baseUrl,
        apiKey: m.apiKey ?? (m.apiKeyEnv === undefined ? undefined : env[m.apiKeyEnv]),
        providerModel: m.model,
        pool: m.pool,
      })),
    },
    /** Payloads over this many bytes go to the payload store; history keeps a reference. */
    claimCheckBytes: e.PAYLOAD_CLAIM_CHECK_BYTES,
    /** Payloads unused this long are deleted (`prunePayloads`), ms; 0: never. */
    payloadRetentionMs: e.PAYLOAD_RETENTION_DAYS * 86_400_000,
    sim: {
      port: e.SIM_PORT,
      tpm: e.MODEL_TPM,
      rpm: e.MODEL_RPM,
      seed: e.SIM_SEED,
      headerDialect: e.SIM_HEADER_DIALECT,
      window: e.SIM_WINDOW,
      holdMs: e.SIM_HOLD_MS,
      /** Lets non-loopback peers use the simulator's and the sink's operator routes. */
      adminToken: e.SIM_ADMIN_TOKEN,
    },
    fleet,
    tenantDefaults,
    runCaps,
    eventCaps,
    governor,
    submitCoalesceMs: e.SUBMIT_COALESCE_MS,
    /** Decide, then start (RUN_START_ORDER): new runs from the API are submitted before they are started. */
    decideFirst: e.RUN_START_ORDER === 'decide-first',
    /** RUN_QUEUED_START: a run that must queue starts with a start delay its admission ends. */
    queuedStartDelayed: e.RUN_QUEUED_START === 'delayed',
    mailboxFlushMs: e.MAILBOX_FLUSH_MS,
    /** How worker reports reach the scheduler (REPORTS), and how long its pull waits for one. */
    reports: { path: e.REPORTS, pullWaitMs: e.REPORT_PULL_WAIT_MS },
    /** The fleet-wide permits on workers' scheduler updates (WORKER_UPDATE_PERMITS, its TTL in ms). */
    updatePermits: { slots: e.WORKER_UPDATE_PERMITS, ttlMs: e.WORKER_UPDATE_PERMIT_TTL_MS },
    /** A prebuilt workflow bundle the worker loads instead of bundling `src/workflows`; undefined: bundled at start. */
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    /** Durable call charges (src/activities/call-charges.ts), in ms. */
    charges: {
      ownerDeadMs: e.CHARGE_OWNER_DEAD_SECONDS * 1000,
      sweepMs: e.CHARGE_SWEEP_SECONDS * 1000,
      keepSettledMs: e.CHARGE_KEEP_SETTLED_SECONDS * 1000,
      reconcileMs: e.CHARGE_RECONCILE_SECONDS * 1000,
      reconcileAfterMs: e.CHARGE_RECONCILE_AFTER_SECONDS * 1000,
      reconcileTakenAfterMs: e.CHARGE_RECONCILE_TAKEN_AFTER_SECONDS * 1000,
      /** The usage lookup provisional charges are settled by; none: their worst case stands. */
      usageLookup:
        e.CHARGE_USAGE_LOOKUP === 'auto'
          ? e.MODEL_BASE_URL === undefined && Object.values(e.MODELS).every((m) => m.baseUrl === undefined)
            ? ('openai-stored' as const)
            : ('none' as const)
          : e.CHARGE_USAGE_LOOKUP,
      /** undefined: MODEL_BASE_URL, else the embedded simulator. */
      usageUrl: e.CHARGE_USAGE_URL ?? e.MODEL_BASE_URL,
    },
    runs: {
      reofferFirstSeconds: e.RUN_REOFFER_FIRST_SECONDS,
      reofferMaxSeconds: Math.max(e.RUN_REOFFER_FIRST_SECONDS, e.RUN_REOFFER_MAX_SECONDS),
      /** Each gated agent's gate (src/agents/gates.ts), the timeouts overridden by GATE_TIMEOUT_SECONDS when set. */
      gates: gatePolicies(e.GATE_TIMEOUT_SECONDS),
      modelCallTimeoutSeconds: e.MODEL_CALL_TIMEOUT_SECONDS,
      effectMaxAttempts: e.EFFECT_MAX_ATTEMPTS,
      effectTimeoutSeconds: e.EFFECT_TIMEOUT_SECONDS,
    },
    /** Module paths of the user's agents (AGENTS), resolved from the working directory by whoever loads them. */
    agentModules: e.AGENTS,
    /** How often the API and worker check that the scheduler workflow runs (and start it when not). */
    watchdogSeconds: e.SCHEDULER_WATCHDOG_SECONDS,
    /** Each tool's credential, read only by a worker that serves the tool and by the effect sink; `serve`: this worker's tools. */
    tools: { credentials, serve: [...new Set(e.WORKER_TOOLS)], identitySalt: e.TOOL_IDENTITY_SALT },
    buildId: e.BUILD_ID,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    /** After the grace, how long a worker waits for cancelled steps before it stops anyway. */
    shutdownForceSeconds: e.SHUTDOWN_FORCE_SECONDS,
    logLevel: e.LOG_LEVEL,
    /** OpenTelemetry traces over OTLP/HTTP; `endpoint` undefined: off. */
    tracing: { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME },
    /** Webhooks out (docs/webhooks.md): delivery settings and the visibility scan's. */
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      pollMs: e.WEBHOOK_POLL_MS,
      overlapMs: e.WEBHOOK_SCAN_OVERLAP_MS,
      targets: e.WEBHOOK_TARGETS,
      retry: {
        maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
        baseMs: e.WEBHOOK_RETRY_BASE_MS,
        maxMs: Math.max(e.WEBHOOK_RETRY_BASE_MS, e.WEBHOOK_RETRY_MAX_MS),
      },
    },
  };
}

/** A model base URL as the usage lookup reads it: without trailing slashes or `/v1`. */
const baseOf = (url: string | undefined): string | undefined => url?.replace(/\/+$/, '').replace(/\/v1$/, '');

/** Parses an environment (default: the process's) into the typed config; throws a readable error. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (!(e.MODEL_DEFAULT in e.MODELS))
    problems.push(
      `MODEL_DEFAULT: "${e.MODEL_DEFAULT}" is not one of MODELS (${Object.keys(e.MODELS).join(', ')})`,
    );
  // A call naming no model and a run of an agent naming none are in the default pool: so is MODEL_DEFAULT.
  const defaultPool = e.MODELS[e.MODEL_DEFAULT]?.pool;
  if (defaultPool !== undefined)
    problems.push(
      `MODELS.${e.MODEL_DEFAULT}.pool: MODEL_DEFAULT's calls are paced in the default pool, with the runs of agents that name no model; give "${defaultPool}" to other models, or make another model the default`,
    );
  const pools = new Set(Object.values(e.MODELS).flatMap((m) => (m.pool === undefined ? [] : [m.pool])));
  for (const [name, m] of Object.entries(e.MODELS)) {
    if (m.quotaShare === undefined) continue;
    if (m.pool === undefined)
      problems.push(
        `MODELS.${name}.quotaShare: only a model in a named pool has its own share; the default pool's is MODEL_QUOTA_SHARE`,
      );
    const other = Object.entries(e.MODELS).find(
      ([, o]) => o.pool === m.pool && o.quotaShare !== undefined && o.quotaShare !== m.quotaShare,
    );
    if (m.pool !== undefined && other)
      problems.push(
        `MODELS.${name}.quotaShare: ${m.quotaShare} differs from MODELS.${other[0]}.quotaShare (${other[1].quotaShare}) in pool "${m.pool}"; a pool has one share`,
      );
  }
  if (pools.size > MAX_POOLS)
    problems.push(
      `MODELS: ${pools.size} pools are named; one scheduler paces at most ${MAX_POOLS} besides the default`,
    );
  for (const [name, m] of Object.entries(e.MODELS))
    if (m.apiKeyEnv !== undefined && !env[m.apiKeyEnv])
      problems.push(`MODELS.${name}.apiKeyEnv: ${m.apiKeyEnv} is not set`);
  // The one usage lookup answers for the calls sent to the one model base URL (MODEL_BASE_URL, else the
  // embedded simulator): a model served elsewhere would read "never served" there and be refunded.
  if (e.CHARGE_USAGE_LOOKUP === 'openai-stored')
    for (const [name, m] of Object.entries(e.MODELS))
      if (m.baseUrl !== undefined && baseOf(m.baseUrl) !== baseOf(e.MODEL_BASE_URL))
        problems.push(
          `MODELS.${name}.baseUrl: ${m.baseUrl} is not MODEL_BASE_URL (${e.MODEL_BASE_URL ?? 'the embedded simulator'}), where CHARGE_USAGE_LOOKUP=openai-stored looks calls up; its cut calls would be refunded although billed. Serve every model at MODEL_BASE_URL, or set CHARGE_USAGE_LOOKUP=none`,
        );
  // A claim must outlive the request that holds it: that request waits up to SCHEDULER_ANSWER_SECONDS.
  if (e.IDEMPOTENCY_PENDING_TTL_SECONDS < e.SCHEDULER_ANSWER_SECONDS)
    problems.push(
      `IDEMPOTENCY_PENDING_TTL_SECONDS: ${e.IDEMPOTENCY_PENDING_TTL_SECONDS} is less than SCHEDULER_ANSWER_SECONDS (${e.SCHEDULER_ANSWER_SECONDS}), the API's wait for the scheduler's answer`,
    );
  if (problems.length) throw new Error(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return toConfig(e, env);
}

/**
 * The `fairway` command's environment: where the API is and the admin token. Separate from the
 * server's schema (the command runs on an operator's laptop, not beside the fleet).
 */
const CliEnvSchema = z.object({
  FAIRWAY_URL: z.url({ protocol: /^https?$/ }).optional(),
  FAIRWAY_ADMIN_TOKEN: optionalString,
  ADMIN_TOKEN: optionalString,
  /** The profile of the config file to use when `--profile` is not given. */
  FAIRWAY_PROFILE: optionalString,
  /** The config file (default `$XDG_CONFIG_HOME/fairway/config.json`, else `~/.config/fairway/config.json`). */
  FAIRWAY_CONFIG: optionalString,
  XDG_CONFIG_HOME: optionalString,
  HOME: optionalString,
});

export interface CliConfig {
  /** FAIRWAY_URL without a trailing slash; undefined when unset. */
  url: string | undefined;
  /** FAIRWAY_ADMIN_TOKEN, else ADMIN_TOKEN; undefined when neither is set. */
  adminToken: string | undefined;
  profile: string | undefined;
  /** The config file's path (it may not exist). */
  configFile: string;
}

export function loadCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  const parsed = CliEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const configHome = e.XDG_CONFIG_HOME ?? `${e.HOME ?? '.'}/.config`;
  return {
    url: e.FAIRWAY_URL?.replace(/\/+$/, ''),
    adminToken: e.FAIRWAY_ADMIN_TOKEN ?? e.ADMIN_TOKEN,
    profile: e.FAIRWAY_PROFILE,
    configFile: e.FAIRWAY_CONFIG ?? `${configHome}/fairway/config.json`,
  };
}
