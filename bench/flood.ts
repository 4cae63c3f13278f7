import { FLOOD_BOUND, floodCounterFailures, runFlood } from './scenarios/flood';
import { flags, startBenchStack, writeResult } from './lib/bench-stack';

/** `npm run bench -- flood [--units 10000]`: issue 3's flood at full size, with its checks. */
export async function runFloodBench(argv: string[]): Promise<void> {
  const f = flags(argv, { units: 10_000 });
  const s = await startBenchStack({
    FLEET_CONCURRENCY: '50',
    MODEL_TPM: '1000000000',
    MODEL_RPM: '100000000',
  });
  try {
    const r = await runFlood(
      { id: 'bench', tenant: s.tenant, call: (m, route, o) => s.call(m, route, o?.body, o?.token) },
      f.units,
      10,
      3_600_000,
    );
    const total = f.units + 10;
    const ok =
      r.aAdmissionsWhileBWaited < FLOOD_BOUND &&
      r.aQueuedAtB >= FLOOD_BOUND &&
      floodCounterFailures(r.counters, total).length === 0 &&
      r.effects.effects === total &&
      r.effects.duplicates === 0;
    console.log(
      `flood: ${f.units}+10 units in ${r.seconds.toFixed(0)} s (${(total / r.seconds).toFixed(1)} units/s end to end); ` +
        `A got ${r.aAdmissionsWhileBWaited} admissions while B's 10 waited (A had ${r.aQueuedAtB} queued then, ` +
        `at least ${r.aQueuedWhenBDone} when B's last was admitted); Jain's index ${r.jain.toFixed(3)}; ` +
        `completed ${r.counters.completed}, effects ${r.effects.effects}, duplicates ${r.effects.duplicates} → ${ok ? 'PASS' : 'FAIL'}`,
    );
    console.log(`wrote ${writeResult('flood', { ...r, pass: ok })}`);
    if (!ok) process.exitCode = 1;
  } finally {
    await s.stop();
  }
}
