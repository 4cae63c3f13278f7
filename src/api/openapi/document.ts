import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registerComponents } from './components';
import { registerPaths } from './paths';
import { registerEventPaths } from './paths-events';
import { registerSchedulePaths } from './paths-schedules';
import { registerWebhookPaths } from './paths-webhooks';
import { builtInCatalog, type AgentCatalog } from '../agents/catalog';

type Document = ReturnType<OpenApiGeneratorV31['generateDocument']>;
const cached = new WeakMap<AgentCatalog, Document>();
let builtIns: AgentCatalog | undefined;

/**
 * The OpenAPI 3.1 document of the API for the agents of `catalog` (default: the built-ins, as
 * docs/openapi.json holds it), generated once per catalog from the zod schemas.
 */
export function openApiDocument(catalog: AgentCatalog = (builtIns ??= builtInCatalog())): Document {
  const hit = cached.get(catalog);
  if (hit) return hit;
  const registry = new OpenAPIRegistry();
  const components = registerComponents(registry, catalog);
  registerPaths(registry, components);
  registerEventPaths(registry, components);
  registerSchedulePaths(registry, components, catalog);
  registerWebhookPaths(registry, components);
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Fairway API',
      version: '1.0.0',
      description:
        'The front door of the Fairway scheduling layer. Every error is {"error": {"code", "message", "details"?}}; ' +
        'refusals at the door (429, 503) carry a Retry-After header in whole seconds.',
    },
    security: [{ bearer: [] }],
  });
  cached.set(catalog, doc);
  return doc;
}

/** The document as `docs/openapi.json` holds it (`npm run docs:openapi`). */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
