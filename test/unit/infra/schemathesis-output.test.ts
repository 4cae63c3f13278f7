import { describe, expect, it } from 'vitest';
import { unbannered } from '../../../src/infra/schemathesis-output';

describe('schemathesis output as npm run fuzz prints it', () => {
  it('drops the = rule around pytest-style banners, which CI would read as a run of no test', () => {
    expect(
      unbannered('============================= 3 warnings in 76.87s ============================='),
    ).toBe('schemathesis: 3 warnings in 76.87s');
    expect(
      unbannered('========================== No issues found in 47.00s ==========================='),
    ).toBe('schemathesis: No issues found in 47.00s');
    expect(
      unbannered('=================================== SUMMARY ===================================='),
    ).toBe('schemathesis: SUMMARY');
  });

  it('leaves every other line as it is', () => {
    for (const line of ['  1632 generated, 1632 passed, 28 skipped', '', '==', 'a == b', ' ✅ 12 passed'])
      expect(unbannered(line)).toBe(line);
  });
});
