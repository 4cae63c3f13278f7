import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { NamespaceNotFoundError } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/contract/errors';
import type { FleetPort } from '../../../src/contract/fleet-port';
import { withUnavailableAs503 } from '../../../src/fleet/unavailable';
import { isPgUnavailable } from '../../../src/stores/engine/pg';

/** A fleet whose every call fails with `err`. */
const failing = (err: unknown) =>
  withUnavailableAs503({
    schedulerStatus: () => Promise.reject(err),
    effectsSummary: () => Promise.reject(err),
  } as unknown as FleetPort);

const grpc = (code: number) =>
  new ServiceError('rpc failed', { cause: Object.assign(new Error('x'), { code }) });
const pgErr = (props: Record<string, unknown>, message = 'boom') => Object.assign(new Error(message), props);

describe('withUnavailableAs503', () => {
  it.each([
    ['gRPC UNAVAILABLE', grpc(14), /scheduler is unreachable/],
    ['gRPC DEADLINE_EXCEEDED', grpc(4), /scheduler is unreachable/],
    ['an update RPC timed out', new WorkflowUpdateRPCTimeoutOrCancelledError('timed out'), /scheduler/],
    ['the effect database refusing connections', pgErr({ code: 'ECONNREFUSED' }), /database is unreachable/],
    ['the effect database shutting down', pgErr({ code: '57P01' }), /database is unreachable/],
    // The cluster's frontend after its PostgreSQL restarted (cluster chaos drill, seed 11).
    ['a namespace lookup failing', new NamespaceNotFoundError('default'), /namespace 'default'/],
  ])('turns %s into 503 unavailable with Retry-After', async (_what, err, message) => {
    const fleet = failing(err);
    const thrown = await fleet.effectsSummary().catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ code: 'unavailable', status: 503, retryAfterSeconds: 5 });
    expect((thrown as Error).message).toMatch(message);
  });

  it.each([
    ['gRPC INVALID_ARGUMENT', grpc(3)],
    ['a plain bug', new TypeError('x is undefined')],
    ['a query the database refused', pgErr({ code: '23505' }, 'duplicate key value')],
  ])('passes %s through unchanged (a 500 with its log line)', async (_what, err) => {
    await expect(failing(err).schedulerStatus()).rejects.toBe(err);
  });
});

describe('isPgUnavailable', () => {
  it('knows the ways a PostgreSQL client says the server is away', () => {
    expect(isPgUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isPgUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isPgUnavailable(pgErr({ code: '57P03' }, 'the database system is starting up'))).toBe(true);
    expect(isPgUnavailable(pgErr({ code: '08006' }))).toBe(true);
    expect(isPgUnavailable(new AggregateError([pgErr({ code: 'ECONNREFUSED' })]))).toBe(true);
    expect(isPgUnavailable(pgErr({ code: '42P01' }, 'relation "x" does not exist'))).toBe(false);
    expect(isPgUnavailable('ECONNREFUSED')).toBe(false);
    expect(isPgUnavailable(null)).toBe(false);
  });
});
