import { InvalidArgumentError } from 'commander';
import type { TenantRecord } from '../stores/tenants/tenants';
import type { Ctx } from './commands';
import { printJson } from './commands';
import { num, pairs, table } from './table';

const tenantPath = (id: string) => `/v1/admin/tenants/${encodeURIComponent(id)}`;

export interface TenantFlags {
  weight?: number | undefined;
  maxQueued?: number | undefined;
  maxInFlight?: number | undefined;
  budget?: number | undefined;
  period?: 'hour' | 'day' | 'month' | 'none' | undefined;
  onBudgetExhausted?: 'fail' | 'park' | undefined;
  /** `--key-weight key=weight`, repeated: the whole map the tenant gets (replacing the previous one). */
  keyWeight?: Record<string, number> | undefined;
  /** `--clear-key-weights`: every key weighs 1 again. */
  clearKeyWeights?: boolean | undefined;
}

/** Collects `--key-weight user-42=3` into a map (the API validates the key and the weight). */
export function keyWeightArg(v: string, previous: Record<string, number> = {}): Record<string, number> {
  const at = v.lastIndexOf('=');
  const weight = Number(v.slice(at + 1));
  if (at < 1 || !(weight > 0) || !Number.isFinite(weight))
    throw new InvalidArgumentError('It must be key=weight, the weight a number > 0 (user-42=3).');
  return { ...previous, [v.slice(0, at)]: weight };
}

function renderTenant(t: TenantRecord): string {
  const s = t.settings;
  return pairs([
    ['tenant', t.tenant],
    ['weight', String(s.weight)],
    ['max queued', num(s.maxQueued)],
    ['max in flight', num(s.maxInFlight)],
    ['budget', s.budget.tokens === null ? 'unlimited' : `${num(s.budget.tokens)} a ${s.budget.period}`],
    ['on budget exhausted', s.onBudgetExhausted ?? 'fail'],
    [
      'key weights',
      s.keyWeights
        ? Object.entries(s.keyWeights)
            .map(([k, w]) => `${k}=${w}`)
            .join(' ')
        : '- (every key weighs 1)',
    ],
    ['state', t.disabled ? 'disabled (keys refused, queued runs held)' : 'enabled'],
  ]);
}

/** Creates the tenant, or updates the settings given; a new tenant's API key is printed once. */
export async function putTenant({ api, io, json }: Ctx, id: string, f: TenantFlags): Promise<void> {
  const body = {
    ...(f.weight !== undefined ? { weight: f.weight } : {}),
    ...(f.maxQueued !== undefined ? { maxQueued: f.maxQueued } : {}),
    ...(f.maxInFlight !== undefined ? { maxInFlight: f.maxInFlight } : {}),
    ...(f.budget !== undefined || f.period !== undefined
      ? {
          budget: { tokens: f.budget ?? null, period: f.period ?? (f.budget === undefined ? 'none' : 'day') },
        }
      : {}),
    ...(f.onBudgetExhausted ? { onBudgetExhausted: f.onBudgetExhausted } : {}),
    ...(f.keyWeight ? { keyWeights: f.keyWeight } : f.clearKeyWeights ? { keyWeights: null } : {}),
  };
  const t = await api.put<TenantRecord & { apiKey?: string }>(tenantPath(id), body);
  if (json) return printJson(io, t);
  io.out(renderTenant(t));
  if (t.apiKey) io.out(`\napi key  ${t.apiKey}\n(shown once: store it now)`);
}

export async function getTenant({ api, io, json }: Ctx, id: string): Promise<void> {
  const t = await api.get<TenantRecord>(tenantPath(id));
  if (json) printJson(io, t);
  else io.out(renderTenant(t));
}

export async function rotateKey({ api, io, json }: Ctx, id: string): Promise<void> {
  const k = await api.post<{ tenant: string; apiKey: string }>(`${tenantPath(id)}/keys`);
  if (json) printJson(io, k);
  else io.out(`api key  ${k.apiKey}\n(the old key no longer works; shown once: store it now)`);
}

/**
 * Disables a tenant (its keys get 403 tenant_disabled, its queued runs wait, kept) or enables it
 * again (its keys work, its queued runs are admitted).
 */
export async function setTenantDisabled(
  { api, io, json }: Ctx,
  id: string,
  disabled: boolean,
): Promise<void> {
  const t = await api.post<TenantRecord>(`${tenantPath(id)}/${disabled ? 'disable' : 'enable'}`);
  if (json) return printJson(io, t);
  io.out(
    t.disabled
      ? `Tenant ${t.tenant} disabled: its keys are refused and its queued runs wait until it is enabled.`
      : `Tenant ${t.tenant} enabled: its keys work and its queued runs are admitted again.`,
  );
}

/**
 * Deletes a disabled tenant with no active runs: its keys, triggers, webhook secrets and settings
 * leave the store (its runs' histories stay in Temporal). The API answers 409 with what blocks it.
 */
export async function deleteTenant({ api, io, json }: Ctx, id: string): Promise<void> {
  await api.delete<null>(tenantPath(id));
  if (json) return printJson(io, { tenant: id, deleted: true });
  io.out(`Tenant ${id} deleted: its keys, triggers, webhook secrets and settings are gone.`);
}

/** Issues the tenant's approver key (replacing any previous one): it alone then decides the tenant's gates. */
export async function approverKey({ api, io, json }: Ctx, id: string): Promise<void> {
  const k = await api.post<{ tenant: string; approverKey: string }>(`${tenantPath(id)}/approver-key`);
  if (json) printJson(io, k);
  else
    io.out(
      `approver key  ${k.approverKey}\n(it reads runs and approvals and decides gates; the tenant's own keys` +
        ' no longer may; shown once: store it now)',
    );
}

const batchPath = (id: string) => `/v1/batches/${encodeURIComponent(id)}`;

export async function getBatch({ api, io, json }: Ctx, id: string): Promise<void> {
  const b = await api.get<Record<string, unknown>>(batchPath(id));
  if (json) return printJson(io, b);
  const entries = Object.entries(b)
    .filter(([k, v]) => k !== 'links' && (typeof v !== 'object' || v === null))
    .map(([k, v]): [string, string] => [k, String(v)]);
  io.out(pairs(entries));
}

export async function resumeBatch({ api, io, json }: Ctx, id: string): Promise<void> {
  const r = await api.post<{ batchId: string; resumed: number }>(`${batchPath(id)}/resume`);
  if (json) printJson(io, r);
  else io.out(`Batch ${r.batchId}: ${num(r.resumed)} unfinished items driven again.`);
}

interface EventItem {
  eventId: string;
  type?: string;
  outcome?: string;
  receivedAt?: string;
  runs?: unknown[];
}

export async function listEvents(
  { api, io, json }: Ctx,
  o: { outcome?: string | undefined; limit?: number | undefined },
): Promise<void> {
  const q = new URLSearchParams();
  if (o.outcome) q.set('outcome', o.outcome);
  if (o.limit) q.set('limit', String(o.limit));
  const page = await api.get<{ items: EventItem[] }>(`/v1/events${q.size ? `?${q}` : ''}`);
  if (json) return printJson(io, page);
  if (page.items.length === 0) return io.out('No events.');
  io.out(
    table(page.items, [
      { title: 'EVENT', value: (e) => e.eventId },
      { title: 'TYPE', value: (e) => e.type ?? '-' },
      { title: 'OUTCOME', value: (e) => e.outcome ?? '-' },
      { title: 'RUNS', value: (e) => String(e.runs?.length ?? 0), right: true },
      { title: 'RECEIVED', value: (e) => e.receivedAt ?? '-' },
    ]),
  );
}

export async function getEvent({ api, io }: Ctx, id: string): Promise<void> {
  printJson(io, await api.get(`/v1/events/${encodeURIComponent(id)}`));
}

export async function replayEvent({ api, io, json }: Ctx, id: string): Promise<void> {
  const r = await api.post<EventItem & { replayed: boolean }>(`/v1/events/${encodeURIComponent(id)}/replay`);
  if (json) return printJson(io, r);
  io.out(
    r.replayed
      ? `Event ${r.eventId} replayed (outcome ${r.outcome ?? '-'}).`
      : `Event ${r.eventId}: nothing to replay (no run was refused and no new trigger matches).`,
  );
}
