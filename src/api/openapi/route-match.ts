import { openApiDocument } from './document';

export interface RouteTemplate {
  /** The OpenAPI path, e.g. `/v1/runs/{runId}`. */
  template: string;
  pattern: RegExp;
  /** The methods the document declares on it, upper case (HEAD with GET, as Express serves it). */
  methods: string[];
}

let cached: RouteTemplate[] | undefined;

/** The route templates of the OpenAPI document as matchers (built once). */
export function routeTemplates(): RouteTemplate[] {
  cached ??= Object.entries(openApiDocument().paths ?? {}).map(([template, item]) => {
    const methods = Object.keys(item ?? {})
      .filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k))
      .map((k) => k.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    return { template, pattern: new RegExp(`^${template.replace(/\{[^/]+\}/g, '[^/]+')}/?$`), methods };
  });
  return cached;
}

/** The template a request path falls under, if any. */
export function matchRoute(path: string): RouteTemplate | undefined {
  return routeTemplates().find((r) => r.pattern.test(path));
}
