import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import { runLoad, simJson, sumWindow } from './lib/load-run';

/**
 * `npm run bench -- storm-cold` (or `storm --cold 1`): the quota is cut before the load arrives, then
 * `runs` runs of `steps` × `tokensPerStep` land at once on a fleet of concurrency 200. The provider's
 * bucket starts full and the governor knows nothing yet. Judged from `judgeFrom` s after the load
 * starts until the backlog is gone: ≤ 2% of calls throttled, ≥ 80% of the quota used.
 */
export async function runStormColdBench(argv: string[]): Promise<void> {
  const f = flags(argv, {
    tpm: 240_000,
    runs: 700,
    steps: 2,
    tokensPerStep: 500,
    stepMs: 0,
    concurrency: 200,
    judgeFrom: 20,
    maxThrottled: 0.02,
    minUtilisation: 0.8,
  });
  const s = await startBenchStack({
    FLEET_CONCURRENCY: String(f.concurrency),
    MODEL_TPM: '2000000',
    MODEL_RPM: '10000000',
    // The storm is the account's only user.
    MODEL_QUOTA_SHARE: '0.95',
  });
  try {
    await simJson(s.simUrl ?? '', '/admin/capacity', { tpm: f.tpm });
    console.log(`quota cut to ${f.tpm} tokens/min before the load; ${f.runs} runs arrive at once`);
    const r = await runLoad(
      s.call,
      s.simUrl ?? '',
      {
        burst: f.runs,
        perSecond: 0,
        loadSeconds: 0,
        steps: f.steps,
        tokensPerStep: f.tokensPerStep,
        stepMs: f.stepMs,
        tenants: 2,
        maxQueued: f.runs,
        drainSeconds: 600,
      },
      (line) => console.log(line),
    );
    // Judged while there is work to do: up to the last second with a backlog queued.
    const busyUntil = Math.max(f.judgeFrom + 1, ...r.seconds.filter((x) => x.queued > 0).map((x) => x.t));
    const w = sumWindow(r.seconds, f.judgeFrom, busyUntil);
    const first = sumWindow(r.seconds, 0, f.judgeFrom);
    const checks = [
      {
        name: `throttled calls ≤ ${100 * f.maxThrottled}% from ${f.judgeFrom} s`,
        pass: w.calls > 0 && w.throttledShare <= f.maxThrottled,
        detail: `${w.throttled}/${w.calls} = ${(100 * w.throttledShare).toFixed(2)}% (${f.judgeFrom}–${busyUntil} s)`,
      },
      {
        name: `quota used ≥ ${100 * f.minUtilisation}% from ${f.judgeFrom} s while a backlog waits`,
        pass: w.utilisation >= f.minUtilisation,
        detail: `${(100 * w.utilisation).toFixed(1)}%`,
      },
      {
        name: 'every run completes',
        pass: r.failed === 0 && r.accepted === f.runs,
        detail: `${r.accepted} accepted, ${r.failed} failed, refused ${JSON.stringify(r.refused)}`,
      },
    ];
    const pass = checks.every((c) => c.pass);
    console.log(
      `first ${f.judgeFrom} s: ${first.throttled}/${first.calls} throttled, utilisation ${(100 * first.utilisation).toFixed(1)}%`,
    );
    for (const c of checks) console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
    console.log(`storm-cold: ${pass ? 'PASS' : 'FAIL'}`);
    console.log(
      `wrote ${writeResult('storm-cold', { options: f, window: w, first, checks, pass, seconds: r.seconds })}`,
    );
    if (!pass) throw new Error('storm-cold: acceptance failed (see above)');
  } finally {
    await s.stop();
  }
}
