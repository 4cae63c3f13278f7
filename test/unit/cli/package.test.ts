import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..', '..', '..');
const read = (p: string) =>
  JSON.parse(readFileSync(path.join(root, p), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
  };

describe('cli/package.json (the installable `fairway` command)', () => {
  it('has the version of the repository and pins its dependencies as the repository does', () => {
    const app = read('package.json');
    const cli = read('cli/package.json');
    expect(cli.version).toBe(app.version);
    expect(Object.keys(cli.dependencies).sort()).toEqual(['commander', 'zod']);
    for (const [name, version] of Object.entries(cli.dependencies))
      expect(version).toBe(app.dependencies[name]);
  });
});
