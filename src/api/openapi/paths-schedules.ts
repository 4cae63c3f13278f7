import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { OVERLAP_POLICIES } from '../../contract/schedules';
import type { AgentCatalog } from '../agents/catalog';
import { PrioritySchema } from '../intake/schemas';
import { ScheduleBodySchema, ScheduleNameSchema, ScheduleOwnerQuerySchema } from '../intake/schedule-schemas';
import type { Components } from './components';
import { commonResponses, errorResponses, json } from './responses';

/** Schedules in the OpenAPI document (docs/schedules.md). */

const ScheduleView = z
  .object({
    name: z.string(),
    tenant: z.string(),
    scheduleId: z.string().describe('The Temporal Schedule id (fairway-schedule:<fleet>:<tenant>:<name>).'),
    agent: z.string(),
    input: z.unknown(),
    priority: PrioritySchema,
    estimatedTokens: z.int(),
    fairnessKey: z.string().nullable(),
    cron: z.string().nullable(),
    intervalSeconds: z.int().nullable(),
    overlap: z.enum(OVERLAP_POLICIES),
    paused: z
      .enum(['tenant', 'drain'])
      .nullable()
      .describe('Who paused it: its tenant, or a drain (resume unpauses it); null while it runs.'),
    recentActions: z.array(
      z.object({
        scheduledAt: z.string(),
        takenAt: z.string(),
        workflowId: z
          .string()
          .describe("The firing's workflow: its result is the run it offered, or the refusal."),
      }),
    ),
    nextActionTimes: z.array(z.string()),
    actionsTaken: z.int(),
    actionsSkippedOverlap: z.int(),
  })
  .meta({ id: 'ScheduleView' });

const name = z.object({ name: ScheduleNameSchema });

export function registerSchedulePaths(registry: OpenAPIRegistry, c: Components, catalog: AgentCatalog): void {
  const errors = (...codes: number[]) => errorResponses(c.Error, ...codes);
  const add = (route: RouteConfig): void =>
    registry.registerPath({
      ...route,
      responses: { ...commonResponses(c.Error, route.method, route.path), ...route.responses },
    });
  // One variant per agent, each with that agent's input schema, as for POST /v1/runs.
  const variants = catalog
    .list()
    .map((a) => ScheduleBodySchema.extend({ agent: z.literal(a.name), input: a.input }));
  const [first, second, ...rest] = variants;
  if (!first) throw new Error('the catalog holds no agent');
  const request = (second ? z.discriminatedUnion('agent', [first, second, ...rest] as never) : first).meta({
    id: 'ScheduleRequest',
    description: 'Exactly one of `cron` (UTC) and `intervalSeconds`.',
  });
  const owner = ScheduleOwnerQuerySchema.describe(
    'The admin token names the tenant; a tenant key acts for its own.',
  );

  add({
    method: 'get',
    path: '/v1/schedules',
    summary: "List the caller's schedules (the admin's: every tenant's, or ?tenant=)",
    request: { query: owner },
    responses: { 200: json(z.object({ items: z.array(ScheduleView) }), 'The schedules, by name.') },
  });
  add({
    method: 'put',
    path: '/v1/schedules/{name}',
    summary: 'Create or replace a schedule (tenant key)',
    request: { params: name, body: { required: true, content: { 'application/json': { schema: request } } } },
    responses: {
      201: json(ScheduleView, 'Created; Location names it.'),
      200: json(ScheduleView, 'Replaced.'),
      ...errors(400, 404, 413),
    },
  });
  add({
    method: 'get',
    path: '/v1/schedules/{name}',
    summary: 'A schedule, with its recent firings and next times',
    request: { params: name, query: owner },
    responses: { 200: json(ScheduleView, 'The schedule.'), ...errors(404) },
  });
  add({
    method: 'delete',
    path: '/v1/schedules/{name}',
    summary: 'Delete a schedule (its runs stay)',
    request: { params: name, query: owner },
    responses: { 204: { description: 'Deleted.' }, ...errors(404) },
  });
  add({
    method: 'post',
    path: '/v1/schedules/{name}/trigger',
    summary: 'Fire a schedule now (its overlap policy applies)',
    request: { params: name, query: owner },
    responses: {
      202: json(
        z.object({
          name: z.string(),
          tenant: z.string(),
          triggered: z.literal(true),
          links: z.object({ self: z.string() }),
        }),
        'Fired: the firing offers its run like any other.',
      ),
      ...errors(404, 503),
    },
  });
}
