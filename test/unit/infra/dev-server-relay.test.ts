import { describe, expect, it } from 'vitest';
import { relay } from '../../../src/infra/dev-server';

/** The dev server's JSON lines reach the logger at their own level, but for operations their caller retries. */
function relayed(line: string) {
  const seen: { level: string; msg: string; fields: unknown }[] = [];
  const at =
    (level: string) =>
    (fields: unknown, msg?: string): void =>
      void seen.push(
        typeof fields === 'string' ? { level, msg: fields, fields: {} } : { level, msg: msg ?? '', fields },
      );
  relay({ debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as never, line);
  return seen;
}

const serverLine = (error: string) =>
  JSON.stringify({
    level: 'error',
    msg: 'Update workflow execution operation failed.',
    'store-operation': 'update-wf-execution',
    error,
  });

describe("the dev server's log relay", () => {
  it('relays an error at error level, with its fields', () => {
    const [e] = relayed(serverLine('shard status unknown'));
    expect(e).toMatchObject({ level: 'error', msg: 'Update workflow execution operation failed.' });
    expect(e!.fields).toMatchObject({
      error: 'shard status unknown',
      'store-operation': 'update-wf-execution',
    });
  });

  it('relays as warnings the operations whose caller gave up and retries: canceled, deadline exceeded', () => {
    expect(relayed(serverLine('context canceled'))[0]!.level).toBe('warn');
    expect(relayed(serverLine('context deadline exceeded'))[0]!.level).toBe('warn');
    // Wrapped by the operation that met it, the cause last.
    const wrapped =
      'GetWorkflowExecution: failed to get signal info. Error: Failed to get signal info. Error: context canceled';
    expect(relayed(serverLine(wrapped))[0]!.level).toBe('warn');
    // A cause that is not the caller's deadline stays an error, wherever the words stand.
    expect(relayed(serverLine('context canceled by shard ownership lost; retry failed'))[0]!.level).toBe(
      'error',
    );
  });

  it('relays as a warning a task handed to a task queue that is closing (it is handed again)', () => {
    expect(relayed(serverLine('task queue closed'))[0]!.level).toBe('warn');
    expect(relayed(serverLine('task queue closed for good; giving up'))[0]!.level).toBe('error');
  });

  it('relays a line that is not JSON at info', () => {
    expect(relayed('Temporal Server: localhost:7233')).toEqual([
      { level: 'info', msg: 'Temporal Server: localhost:7233', fields: {} },
    ]);
  });
});
