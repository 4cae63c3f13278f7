import { proxySinks } from '@temporalio/workflow';
import type { Sinks, WorkflowInterceptors } from '@temporalio/workflow';

/** The probe worker's sink: called during replay too, so a log shows every activation a worker ran. */
export interface NdeSinks extends Sinks {
  nde: { line(text: string): void };
}

const { nde } = proxySinks<NdeSinks>();
const variants = (xs: readonly object[]): string =>
  xs
    .map((x) =>
      Object.keys(x)
        .filter((k) => (x as Record<string, unknown>)[k] != null)
        .join('+'),
    )
    .join(',');

/** Workflow interceptor module (probe workers): each activation's jobs, each completion's commands. */
export const interceptors = (): WorkflowInterceptors => ({
  internals: [
    {
      activate(input, next) {
        const a = input.activation;
        if (!(a.jobs ?? []).some((j) => j.queryWorkflow))
          nde.line(
            `activation replaying=${a.isReplaying} len=${a.historyLength} jobs=${variants(a.jobs ?? [])}`,
          );
        return next(input);
      },
      concludeActivation(input, next) {
        const cmds = input.commands.filter((c) => !c.respondToQuery);
        if (cmds.length > 0 || input.commands.length === 0) nde.line(`commands ${variants(cmds)}`);
        return next(input);
      },
    },
  ],
});
