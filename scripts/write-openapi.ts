import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openApiText } from '../src/api/openapi/document';

/** `npm run docs:openapi`: writes the served OpenAPI document to docs/openapi.json. */
const out = path.join(__dirname, '..', 'docs', 'openapi.json');
writeFileSync(out, openApiText());
console.log(`wrote ${path.relative(process.cwd(), out)}`);
