import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import express from 'express';
import type { RunSpec } from '../../src/contract/fleet-port';
import { PriorityKey, RunStatusKey, TenantIdKey } from '../../src/contract/search-attributes';
import { admitSignal } from '../../src/contract/run-messages';
import { jsonBody } from '../../src/api/middleware/json-body';
import type { runWorkflow } from '../../src/workflows/run';
import { DIRECT_TASK_QUEUE } from './direct-worker';

/** What a client posts to the direct front door: the run's id and its synthetic workload. */
export interface DirectSubmission {
  runId: string;
  steps: number;
  tokensPerStep: number;
}

export interface DirectFrontDoor {
  /** Where it listens (loopback). */
  url: string;
  /** Posts one run (`POST /v1/runs` over HTTP) and resolves with its id once the 202 arrives. */
  submit(s: DirectSubmission): Promise<string>;
  close(): Promise<void>;
}

/**
 * The direct path's HTTP hop: `POST /v1/runs` behind the API's own JSON body parser, on an Express
 * server on loopback, which starts the run on the direct worker's task queue with its admission in
 * the start (signal-with-start), then answers 202. It checks only that a bearer token is present: no
 * tenant lookup, validation, quota or intake; the time the API spends on those is reported apart
 * (submit→workflow start). With `separateSignal`, start then signal (two calls).
 */
export async function startDirectFrontDoor(
  client: Client,
  o: { separateSignal: boolean; port?: number },
): Promise<DirectFrontDoor> {
  let seq = 0;
  const app = express();
  app.use(jsonBody());
  app.post('/v1/runs', (req, res, next) => {
    if (!req.get('authorization')?.startsWith('Bearer ')) {
      res.status(401).json({ error: { code: 'unauthorized' } });
      return;
    }
    const b = req.body as DirectSubmission;
    const now = Date.now();
    const spec: RunSpec = {
      runId: b.runId,
      tenant: 'direct',
      agent: 'synthetic',
      priority: 'standard',
      input: { steps: b.steps, tokensPerStep: b.tokensPerStep },
      estimatedTokens: b.steps * b.tokensPerStep,
      createdAt: new Date(now).toISOString(),
    };
    // What the scheduler would send: the first attempt, with a lease far longer than the run.
    const notice = { attempt: 0, seq: ++seq, admittedAt: now, leaseExpiresAt: now + 3_600_000 };
    const options = {
      workflowId: spec.runId,
      taskQueue: DIRECT_TASK_QUEUE,
      args: [spec] as [RunSpec],
      // As src/fleet/start-run.ts starts a run.
      typedSearchAttributes: new TypedSearchAttributes([
        { key: TenantIdKey, value: spec.tenant },
        { key: PriorityKey, value: spec.priority },
        { key: RunStatusKey, value: 'queued' },
      ]),
      memo: { agent: spec.agent, createdAt: spec.createdAt },
    };
    const started = o.separateSignal
      ? client.workflow
          .start<typeof runWorkflow>('runWorkflow', options)
          .then((h) => h.signal(admitSignal, notice))
      : client.workflow.signalWithStart<typeof runWorkflow, [typeof notice]>('runWorkflow', {
          ...options,
          signal: admitSignal,
          signalArgs: [notice],
        });
    started.then(() => res.status(202).json({ runId: spec.runId }), next);
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(o.port ?? 0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    submit: (s) => submitDirect(url, s),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Posts one run to the direct front door at `url` and resolves with its id once the 202 arrives. */
export async function submitDirect(url: string, s: DirectSubmission): Promise<string> {
  const res = await fetch(`${url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: 'Bearer direct', 'content-type': 'application/json' },
    body: JSON.stringify(s),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`direct POST /v1/runs: ${res.status} ${text}`);
  return (JSON.parse(text) as { runId: string }).runId;
}
