import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Components } from './components';
import { commonResponses, errorResponses, json, type Responses } from './responses';
import * as R from './schemas';
import * as A from './schemas-admin';
import * as S from '../intake/schemas';
import { ConsoleQuerySchema, ConsoleStateSchema } from '../console/schema';

const body = (schema: z.ZodType) => ({
  body: { required: true, content: { 'application/json': { schema } } },
});

const runId = z.object({ runId: z.string() });
const batchId = z.object({ batchId: z.string() });
const tenantId = z.object({ tenantId: S.TenantIdSchema });

/** Every route of the API, as the OpenAPI document describes it. */
export function registerPaths(registry: OpenAPIRegistry, c: Components): void {
  const errors = (...codes: number[]): Responses => errorResponses(c.Error, ...codes);
  const add = (
    method: RouteConfig['method'],
    path: string,
    summary: string,
    rest: Omit<RouteConfig, 'method' | 'path' | 'summary'>,
  ) =>
    registry.registerPath({
      method,
      path,
      summary,
      ...rest,
      responses: { ...commonResponses(c.Error, method, path), ...rest.responses },
    });
  const open = { security: [] };

  add('get', '/healthz', 'Liveness', {
    ...open,
    responses: { 200: json(z.object({ status: z.literal('ok') }), 'Up.') },
  });
  add('get', '/readyz', 'Readiness: Temporal reachable and the scheduler running', {
    ...open,
    responses: { 200: json(z.object({ status: z.literal('ready') }), 'Ready.'), ...errors(503) },
  });
  add('get', '/metrics', 'Prometheus metrics (admin token; or unauthenticated on METRICS_PORT, loopback)', {
    responses: { 200: { description: 'Prometheus text format.' } },
  });
  add('get', '/openapi.json', 'This document', {
    ...open,
    responses: { 200: { description: 'OpenAPI 3.1 JSON.' } },
  });
  add('get', '/console', "The operator console's page (holds no data; it asks /v1/admin/console)", {
    ...open,
    responses: { 200: { description: 'HTML.', content: { 'text/html': { schema: z.string() } } } },
  });
  add('get', '/console/assets/{name}', "A static file of the console's page", {
    ...open,
    request: { params: z.object({ name: z.string() }) },
    responses: {
      200: { description: 'JavaScript or CSS.' },
      ...errors(404),
    },
  });

  add('post', '/v1/runs', 'Submit a run (tenant key)', {
    request: {
      ...body(c.RunRequest),
      headers: z.object({ 'Idempotency-Key': S.IdempotencyKeySchema.optional() }),
    },
    responses: {
      202: json(c.RunAccepted, 'Accepted and queued; Location names the run.'),
      200: json(c.RunReplayed, 'Same idempotency key and body: the existing run.'),
      ...errors(400, 401, 403, 404, 409, 413, 422, 429, 503),
    },
  });
  add('get', '/v1/runs', "List the caller's runs", {
    request: { query: S.RunListQuerySchema },
    responses: { 200: json(c.RunList, 'A page of runs.'), ...errors(400, 401) },
  });
  add('get', '/v1/runs/{runId}', 'A run', {
    request: { params: runId },
    responses: { 200: json(c.RunView, 'The run.'), ...errors(401, 404) },
  });
  add('get', '/v1/runs/{runId}/steps', "A run's steps, model calls and effects, from its history", {
    request: { params: runId },
    responses: {
      200: json(c.RunSteps, "Oldest first; tool calls are the run view's toolCalls."),
      ...errors(401, 404),
    },
  });
  add('post', '/v1/runs/{runId}/cancel', 'Cancel a run', {
    request: { params: runId },
    responses: { 202: json(R.CancelAccepted, 'Cancellation requested.'), ...errors(401, 404, 409) },
  });
  add('get', '/v1/agents', 'The agents runs may name, with their input schemas', {
    responses: {
      200: json(c.AgentList, 'The built-in agents and those of the agents modules.'),
      ...errors(401),
    },
  });
  add('get', '/v1/agents/{name}', 'An agent', {
    request: { params: z.object({ name: z.string() }) },
    responses: { 200: json(c.Agent, 'The agent.'), ...errors(401, 404) },
  });
  add('get', '/v1/approvals', 'The runs waiting at a human gate, newest first', {
    request: { query: S.ApprovalListQuerySchema },
    responses: { 200: json(c.ApprovalList, 'A page of waiting gates.'), ...errors(400, 401) },
  });
  for (const decision of ['approve', 'reject']) {
    add('post', `/v1/runs/{runId}/${decision}`, `${decision} a run awaiting approval`, {
      request: {
        params: runId,
        body: { content: { 'application/json': { schema: S.DecisionRequestSchema } } },
      },
      responses: {
        200: json(
          R.DecisionResponse,
          'Decision recorded; `by` is the deciding key id (`key:…`, `approver:…`) or `admin`. 403 forbidden: the tenant has an approver key and this is its ordinary key.',
        ),
        ...errors(400, 401, 403, 404, 409),
      },
    });
  }

  add('post', '/v1/batches', 'Submit a batch (fan-out; up to 10,000 items)', {
    request: body(c.BatchRequest),
    responses: { 202: json(c.BatchAccepted, 'Accepted.'), ...errors(400, 401, 403, 404, 413, 429, 503) },
  });
  add(
    'post',
    '/v1/batches/open',
    'Open a batch whose items come in parts (any number of items up to 10,000, any size)',
    {
      request: body(c.BatchOpenRequest),
      responses: {
        201: json(R.BatchOpened, 'Open; append parts, then commit. Location names the batch.'),
        ...errors(400, 401, 403, 404, 409, 429, 503),
      },
    },
  );
  add('post', '/v1/batches/{batchId}/items', 'Append part `part` (0, 1, 2, … in order) of an open batch', {
    request: { params: batchId, ...body(c.BatchPartRequest) },
    responses: {
      200: json(R.BatchPartAccepted, 'Appended, or (replayed: true) appended before by the same part.'),
      ...errors(400, 401, 403, 404, 409, 413, 422, 429, 503),
    },
  });
  add('post', '/v1/batches/{batchId}/commit', 'Close an open batch and start it', {
    request: { params: batchId },
    responses: {
      202: json(c.BatchAccepted, 'Committed and started (again on a retry: nothing twice).'),
      ...errors(401, 403, 404, 409, 429, 503),
    },
  });
  add('get', '/v1/batches/{batchId}', 'A batch', {
    request: { params: batchId },
    responses: { 200: json(c.BatchView, 'Counts by status.'), ...errors(401, 404) },
  });
  add('post', '/v1/batches/{batchId}/resume', 'Re-drive the failed items', {
    request: { params: batchId },
    responses: { 202: json(R.BatchResumed, 'How many items were re-driven.'), ...errors(401, 404, 409) },
  });

  add('get', '/v1/tenants/me', "The caller's settings, backlog and ledger", {
    responses: { 200: json(c.TenantMe, 'Tenant view.'), ...errors(401, 403) },
  });

  add('get', '/v1/admin/tenants', 'List tenants (never keys)', {
    responses: { 200: json(z.object({ tenants: z.array(c.Tenant) }), 'Tenants.'), ...errors(401, 403) },
  });
  add('put', '/v1/admin/tenants/{tenantId}', 'Create or update a tenant', {
    request: { params: tenantId, body: { content: { 'application/json': { schema: c.TenantPut } } } },
    responses: {
      201: json(c.TenantCreated, 'Created; apiKey is shown this once.'),
      200: json(c.Tenant, 'Updated.'),
      ...errors(400, 401, 403),
    },
  });
  add('get', '/v1/admin/tenants/{tenantId}', 'A tenant', {
    request: { params: tenantId },
    responses: { 200: json(c.Tenant, 'The tenant.'), ...errors(401, 403, 404) },
  });
  add('post', '/v1/admin/tenants/{tenantId}/keys', 'Rotate the key (the old one stops working)', {
    request: { params: tenantId },
    responses: { 201: json(A.KeyRotatedResponse, 'The new key, shown once.'), ...errors(401, 403, 404) },
  });
  add(
    'post',
    '/v1/admin/tenants/{tenantId}/disable',
    'Disable a tenant: refuse its keys, hold its queued runs',
    {
      request: { params: tenantId },
      responses: {
        200: json(
          c.Tenant,
          'Disabled: its keys and signed deliveries get 403 tenant_disabled; its queued runs stay queued (kept, not admitted) and runs already admitted finish.',
        ),
        ...errors(401, 403, 404),
      },
    },
  );
  add('post', '/v1/admin/tenants/{tenantId}/enable', 'Enable a disabled tenant again', {
    request: { params: tenantId },
    responses: {
      200: json(c.Tenant, 'Enabled: its keys work and its queued runs are admitted again.'),
      ...errors(401, 403, 404),
    },
  });
  add('delete', '/v1/admin/tenants/{tenantId}', 'Delete a disabled tenant with no active runs', {
    request: { params: tenantId },
    responses: {
      204: {
        description:
          "Deleted: its keys, triggers, webhook secrets, events and settings leave the store; its runs' histories stay in Temporal.",
      },
      ...errors(401, 403, 404, 409),
    },
  });
  add('post', '/v1/admin/tenants/{tenantId}/approver-key', "Issue the tenant's approver key", {
    request: { params: tenantId },
    responses: {
      201: json(
        A.ApproverKeyResponse,
        "The approver key, shown once (a new one replaces the old). It reads runs and approvals and approves or rejects the tenant's gates, and nothing else; the tenant's own keys may no longer decide gates.",
      ),
      ...errors(401, 403, 404),
    },
  });
  add('get', '/v1/admin/tenants/{tenantId}/ledger', 'Ledger entries of a tenant', {
    request: { params: tenantId, query: S.LedgerQuerySchema },
    responses: { 200: json(A.LedgerResponse, 'Newest entries.'), ...errors(400, 401, 403, 404) },
  });

  add('get', '/v1/admin/scheduler', 'Scheduler status', {
    responses: { 200: json(c.SchedulerStatus, 'Status.'), ...errors(401, 403) },
  });
  add('patch', '/v1/admin/scheduler', 'Change fleet settings live', {
    request: body(c.SchedulerPatch),
    responses: { 200: json(c.SchedulerStatus, 'Status after the change.'), ...errors(400, 401, 403) },
  });
  add('post', '/v1/admin/drain', 'Drain: stop admitting; refuse or hold new work', {
    request: { body: { content: { 'application/json': { schema: S.DrainRequestSchema } } } },
    responses: { 200: json(c.SchedulerStatus, 'Status.'), ...errors(400, 401, 403) },
  });
  add('post', '/v1/admin/resume', 'Reopen after a drain', {
    responses: { 200: json(c.SchedulerStatus, 'Status.'), ...errors(401, 403) },
  });
  add('get', '/v1/admin/console', "The operator console's data: the last 15 minutes, sampled every 2 s", {
    request: { query: ConsoleQuerySchema },
    responses: {
      200: json(ConsoleStateSchema(c.SchedulerStatus), 'The latest status, tenants, and the newer samples.'),
      ...errors(400, 401, 403),
    },
  });
  add('get', '/v1/admin/effects/summary', 'Effect store totals', {
    responses: { 200: json(A.EffectsSummary, 'Totals.'), ...errors(401, 403) },
  });
}
