import { FLOOD_BOUND, floodCounterFailures, runFlood } from './scenarios/flood';
import type { FloodResult } from './scenarios/flood';
import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import { agentsFlag, runVariants } from './lib/agent-variants';
import type { AgentsVariant } from './lib/agent-variants';

/**
 * `npm run bench -- flood [--units 10000] [--agents built-in|user|both]`: issue 3's flood at full size,
 * with its checks; `--agents both` runs it with the built-in agent, then with its user-code copy.
 */
export async function runFloodBench(argv: string[]): Promise<void> {
  const { agents, variants, rest } = agentsFlag(argv);
  const f = flags(rest, { units: 10_000 }, { agents });
  const floodOf = async (variant: AgentsVariant): Promise<FloodResult & { pass: boolean }> => {
    const s = await startBenchStack(
      { FLEET_CONCURRENCY: '50', MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
      { agents: variant },
    );
    try {
      const r = await runFlood(
        { id: 'bench', tenant: s.tenant, call: (m, route, o) => s.call(m, route, o?.body, o?.token) },
        f.units,
        10,
        3_600_000,
        s.agent,
      );
      const total = f.units + 10;
      const ok =
        r.aAdmissionsWhileBWaited < FLOOD_BOUND &&
        r.aQueuedAtB >= FLOOD_BOUND &&
        floodCounterFailures(r.counters, total).length === 0 &&
        r.effects.effects === total &&
        r.effects.duplicates === 0;
      console.log(
        `flood (${s.agent}): ${f.units}+10 units in ${r.seconds.toFixed(0)} s (${(total / r.seconds).toFixed(1)} units/s end to end); ` +
          `A got ${r.aAdmissionsWhileBWaited} admissions while B's 10 waited (A had ${r.aQueuedAtB} queued then, ` +
          `at least ${r.aQueuedWhenBDone} when B's last was admitted); Jain's index ${r.jain.toFixed(3)}; ` +
          `completed ${r.counters.completed}, effects ${r.effects.effects}, duplicates ${r.effects.duplicates} → ${ok ? 'PASS' : 'FAIL'}`,
      );
      return { ...r, pass: ok };
    } finally {
      await s.stop();
    }
  };
  const all = await runVariants(variants, floodOf);
  console.log(`wrote ${writeResult('flood', all)}`);
  if (!all.pass || all.userAgents?.pass === false) process.exitCode = 1;
}
