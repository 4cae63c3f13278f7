import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { AgentCatalog } from '../agents/catalog';
import * as R from './schemas';
import * as A from './schemas-admin';
import * as S from '../intake/schemas';

/**
 * Names a schema as an OpenAPI component. Zod's own `.meta({ id })` is used rather than zod-to-openapi's
 * `.openapi()`: zod 4 copies methods onto each schema when it is built, so schemas built before
 * `extendZodWithOpenApi` (the catalog, the request schemas) never get `.openapi()`.
 */
const named = <T extends z.ZodType>(id: string, schema: T, description?: string): T =>
  // Keeps what the schema's own meta says (e.g. minProperties, which a refinement cannot tell OpenAPI).
  schema.meta({ ...schema.meta(), id, ...(description === undefined ? {} : { description }) });

/** `my-agent` -> `MyAgent`: an agent's name as a component name's stem. */
const capitalised = (name: string) =>
  name
    .split('-')
    .map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`)
    .join('');

const INPUTS =
  "Each agent's input is its `<Agent>Input` schema: the JSON Schema GET /v1/agents lists for that agent " +
  '(from its zod schema, as a client sends it, before defaults).';

/** The schemas the document names as components; paths refer to these. */
export function registerComponents(registry: OpenAPIRegistry, catalog: AgentCatalog) {
  // Request bodies are discriminated on `agent`: each agent's variant carries that agent's input schema,
  // so a body naming one agent with another's input fails the schema, as it fails the API.
  const agents = catalog.list().map((a) => ({
    name: a.name,
    input: named(`${capitalised(a.name)}Input`, a.input, a.description),
  }));
  const runVariants = agents.map((a) =>
    named(
      `${capitalised(a.name)}RunRequest`,
      S.RunRequestSchema.extend({ agent: z.literal(a.name), input: a.input }),
    ),
  );
  const batchVariants = agents.map((a) =>
    named(
      `${capitalised(a.name)}BatchRequest`,
      S.BatchRequestSchema.extend({
        agent: z.literal(a.name),
        items: z.array(a.input).min(1).max(S.BATCH_MAX_ITEMS),
      }),
    ),
  );
  const openVariants = agents.map((a) =>
    named(
      `${capitalised(a.name)}BatchOpenRequest`,
      S.BatchOpenRequestSchema.extend({ agent: z.literal(a.name) }),
    ),
  );
  const union = <T extends z.ZodType>(variants: T[]): z.ZodType => {
    const [first, second, ...rest] = variants;
    if (!first) throw new Error('the catalog holds no agent');
    return second ? z.discriminatedUnion('agent', [first, second, ...rest] as never) : first;
  };
  const agent = named('Agent', R.AgentResponse);
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'A tenant API key, or the admin token for /v1/admin/*.',
  });
  registry.registerComponent('securitySchemes', 'webhookSignature', {
    type: 'apiKey',
    in: 'header',
    name: 'Fairway-Signature',
    description:
      'POST /v1/events only: t=<unix seconds>,v1=<hex HMAC-SHA256(the source\'s webhook secret, "<t>.<raw body>")>, with ?tenant=.',
  });
  return {
    Error: named('Error', R.ErrorResponse),
    RunRequest: named('RunRequest', union(runVariants), INPUTS),
    RunAccepted: named('RunAccepted', R.RunAccepted),
    RunReplayed: named('RunReplayed', R.RunReplayed),
    RunView: named('RunView', R.RunViewResponse),
    RunList: named('RunList', R.RunList),
    RunSteps: named('RunSteps', R.RunSteps),
    BatchRequest: named('BatchRequest', union(batchVariants), INPUTS),
    BatchAccepted: named('BatchAccepted', R.BatchAccepted),
    BatchView: named('BatchView', R.BatchViewResponse),
    BatchOpenRequest: named('BatchOpenRequest', union(openVariants)),
    BatchPartRequest: named(
      'BatchPartRequest',
      S.BatchPartRequestSchema.extend({
        // The batch's agent (named when it was opened) decides which schema applies to every item.
        items: z
          .array(
            agents.length > 1
              ? z.union(agents.map((a) => a.input) as never as [z.ZodType, z.ZodType])
              : (agents[0]?.input ?? z.unknown()),
          )
          .min(1)
          .max(S.BATCH_MAX_ITEMS),
      }),
    ),
    Agent: agent,
    AgentList: named('AgentList', z.object({ items: z.array(agent) })),
    ApprovalList: named('ApprovalList', R.ApprovalList),
    TenantPut: named('TenantPut', S.TenantPutSchema),
    Tenant: named('Tenant', A.TenantResponse),
    TenantCreated: named('TenantCreated', A.TenantCreatedResponse),
    TenantMe: named('TenantMe', A.TenantMeResponse),
    SchedulerStatus: named('SchedulerStatus', A.SchedulerStatusResponse),
    SchedulerPatch: named('SchedulerPatch', S.SchedulerPatchSchema),
  };
}
export type Components = ReturnType<typeof registerComponents>;
