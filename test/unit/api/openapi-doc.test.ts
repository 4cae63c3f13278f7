import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiText } from '../../../src/api/openapi/document';

describe('docs/openapi.json', () => {
  it('is the document the API serves (run `npm run docs:openapi` after changing a schema)', () => {
    const committed = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'openapi.json'), 'utf8');
    expect(committed).toBe(openApiText());
  });
});
