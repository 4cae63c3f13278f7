import type { Agent, AgentInput, AgentResult } from '../agent/define';
import { FairwayError } from './errors';
import type { Transport } from './transport';
import type {
  Page,
  RunDetails,
  RunListItem,
  RunListQuery,
  RunStatus,
  StartAnswer,
  StartOptions,
} from './types';

/** An agent value (its input and result types flow into the call) or an agent's name. */
export type AgentRef = Agent | string;
/** What `start(agent, input)` takes as input: the agent's input type, or unknown for a name. */
export type InputOf<A extends AgentRef> = A extends Agent ? AgentInput<A> : unknown;
/** What a run of `agent` resolves with: the agent's result type, or unknown for a name. */
export type ResultOf<A extends AgentRef> = A extends Agent ? AgentResult<A> : unknown;

export const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export interface WaitOptions {
  /** Give up after this long with `wait_timeout` (default: wait as long as it takes). */
  timeoutMs?: number;
  /** The first pause between polls (default 250 ms); each next one is 1.5 times longer, up to `maxIntervalMs`. */
  intervalMs?: number;
  /** The longest pause between polls (default 2 s). */
  maxIntervalMs?: number;
}

export interface ResultOptions extends WaitOptions {
  /** A run whose gate was rejected throws `run_rejected` (default); false: resolve with its result. */
  throwOnReject?: boolean;
}

/** One run: its id, and what can be done with it. */
export interface RunHandle<R = unknown> {
  readonly runId: string;
  get(): Promise<RunDetails<R>>;
  /** Polls until the run is in one of `statuses` or finished; resolves with the run as then seen. */
  waitFor(statuses: RunStatus | readonly RunStatus[], opts?: WaitOptions): Promise<RunDetails<R>>;
  /**
   * Waits for the run to finish: the result of a completed run; a FairwayError `run_failed`,
   * `run_cancelled` or `run_rejected` (with `run`) otherwise, or `wait_timeout`.
   */
  result(opts?: ResultOptions): Promise<R>;
  cancel(): Promise<{ runId: string; cancelRequested: boolean }>;
  /**
   * Decides the run's gate. Pass the `gateId` of the gate whose proposal was seen (the run's
   * `gate.gateId`, an approval's `gateId`): a decision for a gate since decided or replaced is 409
   * `conflict`. Without one, only a run's first gate can be decided. A string is the note.
   */
  approve(opts?: string | DecisionOptions): Promise<DecisionAnswer>;
  reject(opts?: string | DecisionOptions): Promise<DecisionAnswer>;
}

/** What a decision sends besides approve or reject. */
export interface DecisionOptions {
  /** The gate decided. */
  gateId?: number;
  /** Recorded with the decision. */
  note?: string;
}

export interface DecisionAnswer {
  runId: string;
  /** The gate decided. */
  gateId?: number;
  decision: 'approved' | 'rejected';
}

const runPath = (runId: string, suffix = '') => `/v1/runs/${encodeURIComponent(runId)}${suffix}`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** True when the run's gate ended in a rejection (by a human, or by its timeout). */
export function wasRejected(run: RunDetails): boolean {
  return run.gate?.decision === 'reject' || run.gate?.outcome === 'reject';
}

function outcomeError(run: RunDetails): FairwayError | undefined {
  if (run.status === 'failed')
    return new FairwayError({
      status: 0,
      code: 'run_failed',
      message: `Run ${run.runId} failed: ${run.error ? `${run.error.code}: ${run.error.message}` : 'no reason given'}.`,
      details: run.error,
      run,
    });
  if (run.status === 'cancelled')
    return new FairwayError({
      status: 0,
      code: 'run_cancelled',
      message: `Run ${run.runId} was cancelled.`,
      run,
    });
  return undefined;
}

export function runHandle<R>(http: Transport, runId: string): RunHandle<R> {
  const get = () => http.request<RunDetails<R>>('GET', runPath(runId));
  const decide = (decision: 'approve' | 'reject', opts: string | DecisionOptions = {}) => {
    const { gateId, note } = typeof opts === 'string' ? { gateId: undefined, note: opts } : opts;
    return http.request<DecisionAnswer>('POST', runPath(runId, `/${decision}`), {
      body: { ...(gateId !== undefined ? { gateId } : {}), ...(note !== undefined ? { note } : {}) },
    });
  };
  const waitFor: RunHandle<R>['waitFor'] = async (statuses, opts = {}) => {
    const wanted = new Set<RunStatus>([
      ...(typeof statuses === 'string' ? [statuses] : statuses),
      ...TERMINAL,
    ]);
    const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    let pause = opts.intervalMs ?? 250;
    for (;;) {
      const run = await get();
      if (wanted.has(run.status)) return run;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new FairwayError({
          status: 0,
          code: 'wait_timeout',
          message: `Run ${runId} was still ${run.status} after ${opts.timeoutMs} ms.`,
          run: run as RunDetails,
        });
      await sleep(Math.min(pause, left));
      pause = Math.min(opts.maxIntervalMs ?? 2_000, pause * 1.5);
    }
  };
  return {
    runId,
    get,
    waitFor,
    async result(opts = {}) {
      const run = await waitFor(TERMINAL, opts);
      const failed = outcomeError(run as RunDetails);
      if (failed) throw failed;
      if ((opts.throwOnReject ?? true) && wasRejected(run as RunDetails))
        throw new FairwayError({
          status: 0,
          code: 'run_rejected',
          message: `Run ${runId}'s gate was rejected${run.gate?.decidedBy ? ` by ${run.gate.decidedBy}` : ''}.`,
          details: run.gate,
          run: run as RunDetails,
        });
      return run.result as R;
    },
    cancel: () =>
      http.request<{ runId: string; cancelRequested: boolean }>('POST', runPath(runId, '/cancel'), {
        body: {},
      }),
    approve: (opts) => decide('approve', opts),
    reject: (opts) => decide('reject', opts),
  };
}

export interface Runs {
  /** Submits a run of `agent` (typed by it) and returns its handle. */
  start<A extends AgentRef>(
    agent: A,
    input: InputOf<A>,
    opts?: StartOptions,
  ): Promise<RunHandle<ResultOf<A>>>;
  /** The handle of an existing run (no request is made). */
  handle<R = unknown>(runId: string): RunHandle<R>;
  get<R = unknown>(runId: string): Promise<RunDetails<R>>;
  list(query?: RunListQuery): Promise<Page<RunListItem>>;
  cancel(runId: string): Promise<{ runId: string; cancelRequested: boolean }>;
}

export function runsApi(http: Transport): Runs {
  return {
    async start(agent, input, opts = {}) {
      const idempotencyKey = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
      const answer = await http.request<StartAnswer>('POST', '/v1/runs', {
        body: {
          agent: typeof agent === 'string' ? agent : agent.name,
          input,
          ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
          ...(opts.estimatedTokens !== undefined ? { estimatedTokens: opts.estimatedTokens } : {}),
          ...(opts.fairnessKey !== undefined ? { fairnessKey: opts.fairnessKey } : {}),
        },
        idempotencyKey,
        repeatable: true,
      });
      return runHandle(http, answer.runId);
    },
    handle: (runId) => runHandle(http, runId),
    get<R>(runId: string) {
      return runHandle<R>(http, runId).get();
    },
    list: (query = {}) => http.request('GET', '/v1/runs', { query: { ...query } }),
    cancel: (runId) => runHandle(http, runId).cancel(),
  };
}
