import { z } from 'zod';
import { DEFAULT_GOVERNOR } from './scheduler/defaults';
import { FALLBACK_FLEET_SETTINGS } from './scheduler/fleet-settings';
import { DEFAULT_INTERACTIVE_RESERVE } from './scheduler/reserve';
import { MAX_CONCURRENCY, MAX_GLOBAL_QUEUED } from './scheduler/limits';
import { defaultTenantSettings } from './scheduler/tenants';
import type { FleetSettings, GovernorParams } from './scheduler/types';
import { TOOL_NAMES } from './contract/tool-registry';
import { gatePolicies } from './agents/gates';
import type { GatePolicy } from './agents/gates';
import type { ToolName } from './contract/tool-registry';

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

/** Per-run caps checked at the door (docs/api.md "Limits"). */
export interface RunCaps {
  /** The most tokens one run may declare or be estimated to use. */
  maxTokens: number;
  /** The longest a run may plan to take, in seconds (by its input, e.g. the synthetic agent's steps × stepMs). */
  maxWallSeconds: number;
}

export const DEFAULT_RUN_CAPS: RunCaps = { maxTokens: 1_000_000, maxWallSeconds: 3600 };

/**
 * Every environment variable Fairway reads, parsed once. Nothing else in the
 * project reads `process.env`; `.env.example` lists each with one line of meaning.
 */
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);
const share = (def: number) => z.coerce.number().min(0).max(1).default(def);
const G = DEFAULT_GOVERNOR;
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** The admin token guards every tenant and the fleet: a short one could be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

const EnvSchema = z.object({
  PORT: int(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optionalString,
  EFFECT_SINK_URL: optionalString,
  SINK_PORT: int(3003),
  METRICS_PORT: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  METRICS_HOST: z.string().default('127.0.0.1'),
  HTTP_HEADERS_TIMEOUT_MS: int(15_000),
  HTTP_REQUEST_TIMEOUT_MS: int(60_000),
  HTTP_MAX_CONNECTIONS: int(1000),
  ADMIN_TOKEN: optionalString.refine(
    (v) => v === undefined || v.length >= MIN_ADMIN_TOKEN_LENGTH,
    `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. \`openssl rand -hex 24\`), or empty to generate one`,
  ),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_PORT: int(7233),
  TEMPORAL_UI_PORT: int(8233),
  TEMPORAL_CLI_PATH: optionalString,
  TASK_QUEUE: z.string().default('fairway'),
  DATA_DIR: z.string().default('./data'),
  SCHEDULER_WORKFLOW_ID: z.string().default('scheduler'),
  MODEL_BASE_URL: optionalString,
  MODEL_API_KEY: optionalString,
  MODEL_NAME: z.string().default('sim-1'),
  MODEL_TPM: int(2_000_000),
  MODEL_RPM: int(60_000),
  SIM_PORT: int(3001),
  SIM_SEED: int(42),
  SIM_HEADER_DIALECT: z.enum(['openai', 'anthropic']).default('openai'),
  MODEL_MAX_PAUSE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(G.maxPauseMs / 1000),
  MODEL_QUOTA_SHARE: z.coerce.number().gt(0).max(1).default(G.quotaShare),
  FLEET_CONCURRENCY: z.coerce.number().int().min(1).max(MAX_CONCURRENCY).default(FLEET.concurrency),
  FLOOR_STANDARD: z.coerce.number().min(0).max(0.5).default(FLEET.floors.standard),
  FLOOR_BATCH: z.coerce.number().min(0).max(0.5).default(FLEET.floors.batch),
  FLEET_INTERACTIVE_RESERVE: z.coerce.number().min(0).max(0.5).default(DEFAULT_INTERACTIVE_RESERVE),
  LEASE_TTL_SECONDS: int(FLEET.leaseTtlSeconds),
  GLOBAL_MAX_QUEUED: z.coerce.number().int().min(0).max(MAX_GLOBAL_QUEUED).default(FLEET.globalMaxQueued),
  DEFAULT_TENANT_MAX_QUEUED: int(TENANT.maxQueued),
  DEFAULT_TENANT_MAX_IN_FLIGHT: int(TENANT.maxInFlight),
  TENANT_RATE_PER_SECOND: int(200),
  TENANT_REQUEST_RATE_PER_SECOND: int(100),
  RUN_MAX_TOKENS: int(DEFAULT_RUN_CAPS.maxTokens),
  RUN_MAX_WALL_SECONDS: int(DEFAULT_RUN_CAPS.maxWallSeconds),
  SUBMIT_COALESCE_MS: int(15),
  MAILBOX_FLUSH_MS: int(100),
  WORKFLOW_BUNDLE_PATH: optionalString,
  CHARGE_OWNER_DEAD_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  CHARGE_SWEEP_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  CHARGE_KEEP_SETTLED_SECONDS: z.coerce.number().int().min(0).default(3600),
  RUN_REOFFER_FIRST_SECONDS: z.coerce.number().int().min(1).default(300),
  RUN_REOFFER_MAX_SECONDS: z.coerce.number().int().min(1).default(1800),
  GATE_TIMEOUT_SECONDS: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 3600)
      .optional(),
  ),
  SCHEDULER_WATCHDOG_SECONDS: z.coerce.number().int().min(1).default(5),
  SCHEDULER_MAX_HISTORY_EVENTS: z.coerce.number().int().min(10).max(40_000).default(1000),
  GOVERNOR_INITIAL_TPM: int(G.initialTokensPerMinute),
  GOVERNOR_MIN_TPM: int(G.minTokensPerMinute),
  GOVERNOR_MAX_TPM: int(G.maxTokensPerMinute),
  GOVERNOR_DECREASE: share(G.decrease),
  GOVERNOR_COOLDOWN_MS: int(G.decreaseCooldownMs),
  GOVERNOR_INCREASE_TPM: int(G.increaseTokensPerMinute),
  GOVERNOR_INCREASE_QUOTA_SHARE: share(G.increaseQuotaShare),
  GOVERNOR_INCREASE_CONCURRENCY: z.coerce.number().nonnegative().default(G.increaseConcurrency),
  GOVERNOR_LOW_WATER: share(G.remainingLowWater),
  TOOL_LOOKUP_CREDENTIAL: optionalString,
  TOOL_PAGER_CREDENTIAL: optionalString,
  TOOL_SCANNER_CREDENTIAL: optionalString,
  WORKER_TOOLS: z
    .string()
    .default(TOOL_NAMES.join(','))
    .transform((v) =>
      v
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    )
    .pipe(z.array(z.enum(TOOL_NAMES))),
  BUILD_ID: z.string().default('fairway-dev'),
  SHUTDOWN_GRACE_SECONDS: int(120),
  SHUTDOWN_FORCE_SECONDS: int(30),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  port: number;
  /** The interface the API and the simulator listen on (`npm run cluster`: loopback only). */
  host: string;
  /** undefined: SQLite files under dataDir; set: the shared stores live in this PostgreSQL database. */
  databaseUrl: string | undefined;
  /** undefined: no external effect sink; set: the effect step also delivers each effect there. */
  effectSinkUrl: string | undefined;
  /** Port of the effect sink process (`npm run start:sink`). */
  sinkPort: number;
  /** A loopback-only listener serving GET /metrics without auth; undefined: metrics only on the API, admin token required. */
  metrics: { port: number | undefined; host: string };
  http: { headersTimeoutMs: number; requestTimeoutMs: number; maxConnections: number };
  adminToken: string | undefined;
  temporal: {
    /** undefined: start the embedded dev server. */
    address: string | undefined;
    namespace: string;
    port: number;
    uiPort: number;
    cliPath: string | undefined;
    taskQueue: string;
  };
  dataDir: string;
  schedulerWorkflowId: string;
  /**
   * The scheduler continues as new after this many history events (or sooner, when the server suggests
   * it). A message that arrives while it continues as new fails that workflow task, and the retry
   * replays the run's whole history, admitting nothing meanwhile: a short history keeps that pause short.
   */
  schedulerMaxHistoryEvents: number;
  model: {
    /** undefined: start the embedded simulator. */
    baseUrl: string | undefined;
    apiKey: string | undefined;
    name: string;
    /** The longest one Retry-After may hold a step or pause the fleet, ms (`MODEL_MAX_PAUSE_SECONDS`). */
    maxPauseMs: number;
  };
  sim: { port: number; tpm: number; rpm: number; seed: number; headerDialect: 'openai' | 'anthropic' };
  fleet: FleetSettings;
  tenantDefaults: TenantDefaults;
  runCaps: RunCaps;
  /** The token governor's parameters (a new scheduler chain starts with them). */
  governor: GovernorParams;
  submitCoalesceMs: number;
  mailboxFlushMs: number;
  /**
   * A prebuilt workflow bundle (`bundleWorkflowCode`'s output, built from this same code) that the
   * worker loads instead of bundling `src/workflows` when it starts (about 5 s of CPU). Unset: bundled
   * at start. The test harness builds one bundle and hands it to the worker processes it spawns.
   */
  workflowBundlePath: string | undefined;
  /**
   * Durable call charges (src/activities/call-charges.ts): a worker unseen for `ownerDeadMs` is dead
   * and its uncharged calls are swept every `sweepMs`; settled rows are kept `keepSettledMs`.
   */
  charges: { ownerDeadMs: number; sweepMs: number; keepSettledMs: number };
  /**
   * A queued run not admitted `reofferFirstSeconds` after its start checks that the scheduler knows it
   * (and re-offers itself when not); while still not admitted it checks again, backing off ×2 up to
   * `reofferMaxSeconds`.
   */
  runs: {
    reofferFirstSeconds: number;
    reofferMaxSeconds: number;
    /** Each gated agent's gate (src/agents/gates.ts), the timeouts overridden by GATE_TIMEOUT_SECONDS when set. */
    gates: Record<string, GatePolicy>;
  };
  /** How often the API and worker check that the scheduler workflow runs (and start it when not). */
  watchdogSeconds: number;
  /**
   * Per-tool identities: each tool's credential (TOOL_<NAME>_CREDENTIAL), read only by a worker that
   * serves the tool and by the effect sink that authenticates it; `serve`: the tools this process's
   * worker serves (WORKER_TOOLS, comma-separated; empty: none).
   */
  tools: { credentials: Partial<Record<ToolName, string>>; serve: ToolName[] };
  buildId: string;
  shutdownGraceSeconds: number;
  /** After the grace, how long a worker waits for cancelled steps before it stops anyway. */
  shutdownForceSeconds: number;
  logLevel: Env['LOG_LEVEL'];
}

/** Parses an environment (default: the process's) into the typed config; throws a readable error. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    effectSinkUrl: e.EFFECT_SINK_URL,
    sinkPort: e.SINK_PORT,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    adminToken: e.ADMIN_TOKEN,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      cliPath: e.TEMPORAL_CLI_PATH,
      taskQueue: e.TASK_QUEUE,
    },
    dataDir: e.DATA_DIR,
    schedulerWorkflowId: e.SCHEDULER_WORKFLOW_ID,
    schedulerMaxHistoryEvents: e.SCHEDULER_MAX_HISTORY_EVENTS,
    model: {
      baseUrl: e.MODEL_BASE_URL,
      apiKey: e.MODEL_API_KEY,
      name: e.MODEL_NAME,
      maxPauseMs: e.MODEL_MAX_PAUSE_SECONDS * 1000,
    },
    sim: {
      port: e.SIM_PORT,
      tpm: e.MODEL_TPM,
      rpm: e.MODEL_RPM,
      seed: e.SIM_SEED,
      headerDialect: e.SIM_HEADER_DIALECT,
    },
    fleet: {
      concurrency: e.FLEET_CONCURRENCY,
      floors: { standard: e.FLOOR_STANDARD, batch: e.FLOOR_BATCH },
      leaseTtlSeconds: e.LEASE_TTL_SECONDS,
      globalMaxQueued: e.GLOBAL_MAX_QUEUED,
      interactiveReserve: e.FLEET_INTERACTIVE_RESERVE,
    },
    tenantDefaults: {
      maxQueued: e.DEFAULT_TENANT_MAX_QUEUED,
      maxInFlight: e.DEFAULT_TENANT_MAX_IN_FLIGHT,
      ratePerSecond: e.TENANT_RATE_PER_SECOND,
      requestRatePerSecond: e.TENANT_REQUEST_RATE_PER_SECOND,
    },
    runCaps: { maxTokens: e.RUN_MAX_TOKENS, maxWallSeconds: e.RUN_MAX_WALL_SECONDS },
    governor: {
      ...DEFAULT_GOVERNOR,
      initialTokensPerMinute: e.GOVERNOR_INITIAL_TPM,
      minTokensPerMinute: e.GOVERNOR_MIN_TPM,
      maxTokensPerMinute: e.GOVERNOR_MAX_TPM,
      quotaShare: e.MODEL_QUOTA_SHARE,
      maxPauseMs: e.MODEL_MAX_PAUSE_SECONDS * 1000,
      decrease: e.GOVERNOR_DECREASE,
      decreaseCooldownMs: e.GOVERNOR_COOLDOWN_MS,
      increaseTokensPerMinute: e.GOVERNOR_INCREASE_TPM,
      increaseQuotaShare: e.GOVERNOR_INCREASE_QUOTA_SHARE,
      increaseConcurrency: e.GOVERNOR_INCREASE_CONCURRENCY,
      remainingLowWater: e.GOVERNOR_LOW_WATER,
    },
    submitCoalesceMs: e.SUBMIT_COALESCE_MS,
    mailboxFlushMs: e.MAILBOX_FLUSH_MS,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    charges: {
      ownerDeadMs: e.CHARGE_OWNER_DEAD_SECONDS * 1000,
      sweepMs: e.CHARGE_SWEEP_SECONDS * 1000,
      keepSettledMs: e.CHARGE_KEEP_SETTLED_SECONDS * 1000,
    },
    runs: {
      reofferFirstSeconds: e.RUN_REOFFER_FIRST_SECONDS,
      reofferMaxSeconds: Math.max(e.RUN_REOFFER_FIRST_SECONDS, e.RUN_REOFFER_MAX_SECONDS),
      gates: gatePolicies(e.GATE_TIMEOUT_SECONDS),
    },
    watchdogSeconds: e.SCHEDULER_WATCHDOG_SECONDS,
    tools: {
      credentials: Object.fromEntries(
        (
          [
            ['lookup', e.TOOL_LOOKUP_CREDENTIAL],
            ['pager', e.TOOL_PAGER_CREDENTIAL],
            ['scanner', e.TOOL_SCANNER_CREDENTIAL],
          ] as const
        ).filter(([, c]) => c !== undefined),
      ),
      serve: [...new Set(e.WORKER_TOOLS)],
    },
    buildId: e.BUILD_ID,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    shutdownForceSeconds: e.SHUTDOWN_FORCE_SECONDS,
    logLevel: e.LOG_LEVEL,
  };
}

/**
 * The `fairway` command's environment: where the API is and the admin token. Separate from the
 * server's schema (the command runs on an operator's laptop, not beside the fleet).
 */
const CliEnvSchema = z.object({
  FAIRWAY_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3000'),
  FAIRWAY_ADMIN_TOKEN: optionalString,
  ADMIN_TOKEN: optionalString,
});

export interface CliConfig {
  /** The API's base URL, without a trailing slash. */
  url: string;
  /** FAIRWAY_ADMIN_TOKEN, else ADMIN_TOKEN; undefined when neither is set. */
  adminToken: string | undefined;
}

export function loadCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  const parsed = CliEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return { url: e.FAIRWAY_URL.replace(/\/+$/, ''), adminToken: e.FAIRWAY_ADMIN_TOKEN ?? e.ADMIN_TOKEN };
}
