import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import { createProgress } from './lib/progress';
import { CLUSTER_TEMPORAL, startClusterDrillStack } from './lib/cluster-drill-stack';

type Call = (
  method: string,
  route: string,
  body?: unknown,
  token?: string,
) => Promise<{ status: number; body: any }>;

/** `--cluster`: the same load on `npm run cluster`'s shape (2 APIs, 2 workers, 4 Temporal processes). */
async function startTarget(cluster: boolean, concurrency: number, maxHistoryEvents: number) {
  if (!cluster) {
    const s = await startBenchStack(
      { FLEET_CONCURRENCY: String(concurrency), MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
      maxHistoryEvents ? { scheduler: { maxHistoryEvents } } : {},
    );
    return { call: s.call as Call, tenant: s.tenant, stop: s.stop };
  }
  const s = await startClusterDrillStack({ concurrency, log: (m) => console.log(`· ${m}`) });
  const call: Call = (method, route, body, token) =>
    s.call(method, route, {
      ...(body !== undefined ? { body } : {}),
      ...(token ? { token } : {}),
      timeoutMs: 120_000,
    });
  return { call, tenant: s.tenant, stop: s.stop };
}

/**
 * `npm run bench -- throughput-batches [--cluster]`: how many admissions per second the real scheduler workflow
 * sustains on this machine, end to end (API → scheduler → run workflows → model plane → release).
 */
export async function runThroughput(argv: string[]): Promise<void> {
  const cluster = argv.includes('--cluster');
  const f = flags(
    argv.filter((a) => a !== '--cluster'),
    { units: 3000, concurrency: 100, tenants: 4, maxHistoryEvents: 0, effect: 0 },
  );
  const s = await startTarget(cluster, f.concurrency, f.maxHistoryEvents);
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
    const bar = createProgress('throughput', total, { unit: 'units' });
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
      bar.update(
        point.completed,
        `admitted ${point.admitted}, queued ${point.queued}, in flight ${point.inFlight}, continued-as-new ${point.cans}`,
      );
      if (st.counters.completed >= total) break;
    }
    bar.finish();
    const seconds = (Date.now() - t0) / 1000;
    const result = {
      target: cluster ? 'cluster' : 'dev server',
      units: total,
      concurrency: f.concurrency,
      seconds,
      admissionsPerSecond: total / seconds,
      timeline,
    };
    console.log(
      `throughput${cluster ? ' (cluster)' : ''}: ${total} units in ${seconds.toFixed(1)} s = ${(total / seconds).toFixed(1)} admissions/s (concurrency ${f.concurrency})`,
    );
    const file = cluster
      ? writeResult('throughput-batches-cluster', result, { temporal: CLUSTER_TEMPORAL })
      : writeResult('throughput-batches', result);
    console.log(`wrote ${file}`);
  } finally {
    await s.stop();
  }
}
