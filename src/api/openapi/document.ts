import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registerComponents } from './components';
import { registerPaths } from './paths';
import { registerEventPaths } from './paths-events';

let cached: ReturnType<OpenApiGeneratorV31['generateDocument']> | undefined;

/** The OpenAPI 3.1 document of the API, generated once from the zod schemas. */
export function openApiDocument() {
  if (cached) return cached;
  const registry = new OpenAPIRegistry();
  const components = registerComponents(registry);
  registerPaths(registry, components);
  registerEventPaths(registry, components);
  cached = new OpenApiGeneratorV31(registry.definitions).generateDocument({
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
  return cached;
}

/** The document as `docs/openapi.json` holds it (`npm run docs:openapi`). */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
