import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { AGENTS } from '../../agents/catalog';
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

const capitalised = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/** The schemas the document names as components; paths refer to these. */
export function registerComponents(registry: OpenAPIRegistry) {
  // Request bodies are discriminated on `agent`: each agent's variant carries that agent's input schema,
  // so a body naming one agent with another's input fails the schema, as it fails the API.
  const agents = Object.values(AGENTS).map((a) => ({
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
  const union = <T extends z.ZodType>(variants: T[]) => {
    const [first, second, ...rest] = variants;
    if (!first || !second) throw new Error('the catalog has fewer than two agents');
    return z.discriminatedUnion('agent', [first, second, ...rest] as never);
  };
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
    RunRequest: named('RunRequest', union(runVariants)),
    RunAccepted: named('RunAccepted', R.RunAccepted),
    RunReplayed: named('RunReplayed', R.RunReplayed),
    RunView: named('RunView', R.RunViewResponse),
    RunList: named('RunList', R.RunList),
    BatchRequest: named('BatchRequest', union(batchVariants)),
    BatchAccepted: named('BatchAccepted', R.BatchAccepted),
    BatchView: named('BatchView', R.BatchViewResponse),
    BatchOpenRequest: named('BatchOpenRequest', union(openVariants)),
    BatchPartRequest: named(
      'BatchPartRequest',
      S.BatchPartRequestSchema.extend({
        // The batch's agent (named when it was opened) decides which schema applies to every item.
        items: z
          .array(z.union(agents.map((a) => a.input) as never as [z.ZodType, z.ZodType]))
          .min(1)
          .max(S.BATCH_MAX_ITEMS),
      }),
    ),
    TenantPut: named('TenantPut', S.TenantPutSchema),
    Tenant: named('Tenant', A.TenantResponse),
    TenantCreated: named('TenantCreated', A.TenantCreatedResponse),
    TenantMe: named('TenantMe', A.TenantMeResponse),
    SchedulerStatus: named('SchedulerStatus', A.SchedulerStatusResponse),
    SchedulerPatch: named('SchedulerPatch', S.SchedulerPatchSchema),
  };
}
export type Components = ReturnType<typeof registerComponents>;
