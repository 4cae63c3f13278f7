import { loadConfig } from './config';
import { closeOnSignal, failStart } from './entry/shutdown';
import { startStack } from './stack';

/** `npm start`: the whole stack in one process tree, with a banner of where everything is. */
async function main(): Promise<void> {
  const config = loadConfig();
  const stack = await startStack(config, { temporal: true, sim: true, worker: true, api: true });
  const lines = [
    '',
    '  Fairway is up.',
    `  API            ${stack.apiUrl}   (OpenAPI at ${stack.apiUrl}/openapi.json)`,
    config.host === '127.0.0.1' || config.host === 'localhost'
      ? '  Listening on   loopback only (HOST=0.0.0.0 opens every interface)'
      : `  Listening on   ${config.host} (HOST)`,
    `  Temporal       ${stack.temporalAddress}   (namespace ${config.temporal.namespace})`,
    stack.uiUrl ? `  Temporal UI    ${stack.uiUrl}` : '',
    `  Model plane    ${stack.modelBaseUrl}${stack.sim ? '   (embedded simulator)' : ''}`,
    `  Scheduler      workflow id "${config.schedulerWorkflowId}"`,
    stack.adminTokenGenerated
      ? `  Admin token    ${stack.adminToken}   (generated once, kept in DATA_DIR/admin-token; set ADMIN_TOKEN to choose one)`
      : '',
    '  Ctrl-C stops everything.',
    '',
  ];
  // The banner on a terminal; where the output is a log (JSON lines), the same facts as one entry.
  if (process.stdout.isTTY) console.log(lines.filter((l) => l !== '').join('\n'));
  else
    stack.log.info(
      {
        api: stack.apiUrl,
        temporal: stack.temporalAddress,
        namespace: config.temporal.namespace,
        ui: stack.uiUrl,
        modelPlane: stack.modelBaseUrl,
        scheduler: config.schedulerWorkflowId,
        ...(stack.adminTokenGenerated ? { adminToken: stack.adminToken } : {}),
      },
      'Fairway is up',
    );
  closeOnSignal(stack.close, { info: (m) => stack.log.info(m), error: (m) => stack.log.error(m) });
}

main().catch(failStart);
