import type { OverlapPolicy, ScheduleView } from '../contract/schedules';
import type { AgentRef, InputOf } from './runs';
import type { Transport } from './transport';

export type { OverlapPolicy, ScheduleView } from '../contract/schedules';

/** A schedule as `PUT /v1/schedules/:name` takes it: exactly one of `cron` (UTC) and `intervalSeconds`. */
export type ScheduleSpec<A extends AgentRef> = {
  agent: A;
  input: InputOf<A>;
  priority?: 'interactive' | 'standard' | 'batch';
  estimatedTokens?: number;
  overlap?: OverlapPolicy;
  paused?: boolean;
} & ({ cron: string; intervalSeconds?: never } | { intervalSeconds: number; cron?: never });

/** The caller's schedules (docs/schedules.md): recurring runs on Temporal Schedules. */
export interface Schedules {
  /** Creates or replaces the schedule; its input is typed by the agent. */
  put<A extends AgentRef>(name: string, spec: ScheduleSpec<A>): Promise<ScheduleView>;
  list(): Promise<{ items: ScheduleView[] }>;
  get(name: string): Promise<ScheduleView>;
  delete(name: string): Promise<void>;
  /** Fires it now (its overlap policy applies); 503 `draining` while the fleet is drained. */
  trigger(name: string): Promise<{ name: string; tenant: string; triggered: true }>;
}

const path = (name: string) => `/v1/schedules/${encodeURIComponent(name)}`;

export function schedulesApi(http: Transport): Schedules {
  return {
    put: (name, spec) =>
      http.request('PUT', path(name), {
        body: { ...spec, agent: typeof spec.agent === 'string' ? spec.agent : spec.agent.name },
        repeatable: true,
      }),
    list: () => http.request('GET', '/v1/schedules'),
    get: (name) => http.request('GET', path(name)),
    delete: (name) => http.request('DELETE', path(name)),
    trigger: (name) => http.request('POST', `${path(name)}/trigger`),
  };
}
