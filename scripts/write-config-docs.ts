import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_DOC, ENV_EXAMPLE, renderConfigDoc, renderEnvExample } from './lib/config-docs';

/** `npm run docs:config`: writes docs/configuration.md and .env.example from the schema in src/config.ts. */
async function main(): Promise<void> {
  writeFileSync(CONFIG_DOC, await renderConfigDoc());
  writeFileSync(ENV_EXAMPLE, renderEnvExample());
  for (const f of [CONFIG_DOC, ENV_EXAMPLE]) console.log(`wrote ${path.relative(process.cwd(), f)}`);
}

void main();
