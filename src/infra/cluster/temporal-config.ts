import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(__dirname, '..', '..', '..');
/** Committed templates: the server's config, the Web UI's, and the dynamic config compose uses too. */
export const templates = {
  server: path.join(projectRoot, 'deploy', 'cluster', 'temporal.yaml'),
  ui: path.join(projectRoot, 'deploy', 'cluster', 'ui.yaml'),
  dynamicConfig: path.join(projectRoot, 'deploy', 'dynamicconfig', 'development-sql.yaml'),
};

/** Fills `${NAME}` placeholders; a placeholder without a value is an error, not an empty string. */
export function renderTemplate(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`template placeholder \${${name}} has no value`);
    return String(v);
  });
}

export function renderTemplateFile(from: string, to: string, vars: Record<string, string | number>): string {
  writeFileSync(to, renderTemplate(readFileSync(from, 'utf8'), vars));
  return to;
}
