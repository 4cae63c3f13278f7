import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config';
import { workflowSource, workflowsPath } from '../../../src/fleet/worker';

describe("the worker's workflow code (WORKFLOW_BUNDLE_PATH)", () => {
  it('is bundled from the workflows folder at start unless a prebuilt bundle is configured', () => {
    expect(loadConfig({}).workflowBundlePath).toBeUndefined();
    expect(loadConfig({ WORKFLOW_BUNDLE_PATH: '' }).workflowBundlePath).toBeUndefined();
    expect(workflowSource(undefined)).toEqual({ workflowsPath });
  });

  it('loads the configured bundle instead', () => {
    const config = loadConfig({ WORKFLOW_BUNDLE_PATH: '/opt/fairway/workflows.js' });
    expect(config.workflowBundlePath).toBe('/opt/fairway/workflows.js');
    expect(workflowSource(config.workflowBundlePath)).toEqual({
      workflowBundle: { codePath: '/opt/fairway/workflows.js' },
    });
  });
});
