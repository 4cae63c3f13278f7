import { flags, startBenchStack, writeResult } from './lib/bench-stack';

/**
 * `npm run bench -- throughput`: how many admissions per second the real scheduler workflow
 * sustains on this machine, end to end (API → scheduler → run workflows → model plane → release).
 */
export async function runThroughput(argv: string[]): Promise<void> {
  const f = flags(argv, { units: 3000, concurrency: 100, tenants: 4, maxHistoryEvents: 0, effect: 0 });
  const s = await startBenchStack(
    { FLEET_CONCURRENCY: String(f.concurrency), MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
    f.maxHistoryEvents ? { scheduler: { maxHistoryEvents: f.maxHistoryEvents } } : {},
  );
  try {
    const keys = await Promise.all(
      Array.from({ length: f.tenants }, (_, i) =>
        s.tenant(`bench-${i}`, { maxQueued: 100_000, maxInFlight: f.concurrency }),
      ),
    );
    const per = Math.ceil(f.units / f.tenants);
    const t0 = Date.now();
    await Promise.all(
      keys.map((k) =>
        s.call(
          'POST',
          '/v1/batches',
          {
            agent: 'synthetic',
            items: Array.from({ length: per }, () => ({
              steps: 1,
              tokensPerStep: 100,
              effect: f.effect === 1,
            })),
          },
          k,
        ),
      ),
    );
    const total = per * f.tenants;
    const timeline: {
      t: number;
      admitted: number;
      completed: number;
      queued: number;
      inFlight: number;
      cans: number;
    }[] = [];
    for (;;) {
      await new Promise((r) => setTimeout(r, 2000));
      const st = (await s.call('GET', '/v1/admin/scheduler')).body;
      if (!st?.counters) {
        console.log('status unavailable', JSON.stringify(st));
        continue;
      }
      const point = {
        t: (Date.now() - t0) / 1000,
        admitted: st.counters.admitted,
        completed: st.counters.completed,
        queued: st.queued.total,
        inFlight: st.inFlight,
        cans: st.history.continuedAsNew,
      };
      timeline.push(point);
      console.log(
        `t=${point.t.toFixed(0)}s admitted=${point.admitted} completed=${point.completed} queued=${point.queued} inFlight=${point.inFlight} continuedAsNew=${point.cans}`,
      );
      if (st.counters.completed >= total) break;
    }
    const seconds = (Date.now() - t0) / 1000;
    const result = {
      units: total,
      concurrency: f.concurrency,
      seconds,
      admissionsPerSecond: total / seconds,
      timeline,
    };
    console.log(
      `throughput: ${total} units in ${seconds.toFixed(1)} s = ${(total / seconds).toFixed(1)} admissions/s (concurrency ${f.concurrency})`,
    );
    console.log(`wrote ${writeResult('throughput-batches', result)}`);
  } finally {
    await s.stop();
  }
}
