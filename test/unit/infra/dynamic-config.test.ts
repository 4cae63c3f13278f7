import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAIRWAY_DYNAMIC_CONFIG } from '../../../src/infra/dev-server';

/**
 * The embedded dev server (`npm start`, the tests) and the compose/cluster servers must run with the
 * same Fairway-specific server settings, or a behaviour seen in one is missed in the other.
 */
describe('Temporal dynamic config parity', () => {
  const file = readFileSync(
    path.join(__dirname, '../../../deploy/dynamicconfig/development-sql.yaml'),
    'utf8',
  );

  it.each(Object.entries(FAIRWAY_DYNAMIC_CONFIG))('the server file sets %s to %j', (key, value) => {
    const block = new RegExp(`^${key.replace(/\./g, '\\.')}:\\n\\s+- value: (.+?)(\\s+#.*)?$`, 'm').exec(
      file,
    );
    expect(block, `${key} missing from development-sql.yaml`).not.toBeNull();
    expect(JSON.parse(block![1]!)).toEqual(value);
  });

  it('raises the query buffer above the server default of 1', () => {
    expect(FAIRWAY_DYNAMIC_CONFIG['history.MaxBufferedQueryCount']).toBeGreaterThan(1);
  });
});
