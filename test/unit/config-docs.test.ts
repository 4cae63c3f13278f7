import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOC, ENV_EXAMPLE, renderConfigDoc, renderEnvExample } from '../../scripts/lib/config-docs';
import { ENV_SECTIONS, EnvSchema } from '../../src/config';

/** docs/configuration.md and .env.example are generated from the schema: no hand edits, nothing stale. */
describe('npm run docs:config', () => {
  it('docs/configuration.md is exactly what the generator writes from src/config.ts', async () => {
    expect(readFileSync(CONFIG_DOC, 'utf8')).toBe(await renderConfigDoc());
  });

  it('.env.example is exactly what the generator writes from src/config.ts', () => {
    expect(readFileSync(ENV_EXAMPLE, 'utf8')).toBe(renderEnvExample());
  });

  it('every variable of the schema is in one section, and has a description', () => {
    const listed = ENV_SECTIONS.flatMap((s) => Object.keys(s.vars));
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.sort()).toEqual(Object.keys(EnvSchema.shape).sort());
    for (const s of ENV_SECTIONS) {
      for (const [name, schema] of Object.entries(s.vars)) {
        expect(schema.description, name).toMatch(/\S/);
      }
    }
  });

  it('documents each variable with its default', async () => {
    const doc = await renderConfigDoc();
    expect(doc).toMatch(/\| `FLEET_CONCURRENCY` +\| `100` +\|/);
    expect(doc).toMatch(/\| `ADMIN_TOKEN` +\| unset +\|/);
    expect(renderEnvExample()).toContain('\nWORKER_TOOLS=lookup,pager,scanner\n');
  });
});
